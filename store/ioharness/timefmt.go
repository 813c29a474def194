package ioharness

import (
	"database/sql"
	"strconv"
	"time"
)

// io-harness stamps times with SQLite's clock in two shapes: ISO-8601 with
// milliseconds (strftime('%Y-%m-%dT%H:%M:%fZ','now')) for most columns and
// datetime('now') (no T, Z or milliseconds) for a few. Both are UTC.
const (
	isoMillis   = "2006-01-02T15:04:05.000Z"
	sqlDateTime = "2006-01-02 15:04:05"
)

// parseTime reads either shape; anything else (or NULL) is the zero time.
func parseTime(s string) time.Time {
	for _, layout := range []string{isoMillis, time.RFC3339Nano, sqlDateTime} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

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

func idStr(id int64) string { return strconv.FormatInt(id, 10) }

func nullIDStr(id sql.NullInt64) string {
	if !id.Valid {
		return ""
	}
	return idStr(id.Int64)
}

// parseID turns a run or request id given as text into the integer the
// store keys on.
func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}
