package ioharness

import (
	"database/sql"
	"time"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// parseTime reads io-harness's time stamps (schema.ParseTime).
func parseTime(s string) time.Time { return schema.ParseTime(s) }

func nullTime(s sql.NullString) time.Time {
	if !s.Valid {
		return time.Time{}
	}
	return parseTime(s.String)
}

func nullStr(s sql.NullString) string {
	if s.Valid {
		return s.String
	}
	return ""
}

func nullInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func idStr(id int64) string { return schema.ID(id) }

func nullIDStr(id sql.NullInt64) string {
	if !id.Valid {
		return ""
	}
	return idStr(id.Int64)
}

// parseID turns a run or request id given as text into the integer the
// store keys on.
func parseID(s string) (int64, bool) { return schema.ParseID(s) }
