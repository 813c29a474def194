package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Huge text values (a tool result of hundreds of megabytes) are never
// handed to SQL: any expression over a column, substr included, has SQLite
// load the whole value, and the driver copy it again. A column that may be
// huge is read as capped(col): the value itself only when it is at most
// MaxDetailBytes long (octet_length reads the length from the record
// header without loading the value), else NULL and its length; the head of
// a longer one is then read a piece at a time (sqlitex.FieldHead), after
// the query is done with the connection.

// capped is a text column as two result columns: the value when it is at
// most MaxDetailBytes long (else NULL), and its length in bytes.
func capped(col string) string {
	return cappedAt(col, store.MaxDetailBytes)
}

func cappedAt(col string, n int) string {
	return fmt.Sprintf("CASE WHEN octet_length(%s) <= %d THEN %s END, octet_length(%s)", col, n, col, col)
}

// cappedText is what capped reads: the value, or its length alone.
type cappedText struct {
	v sql.NullString
	n sql.NullInt64
}

// big reports a value left out for its size.
func (c cappedText) big(limit int) bool { return !c.v.Valid && c.n.Int64 > int64(limit) }

// head is the first n bytes of table's column in row rowid, cut back to
// a whole character, and the value's length.
func (s *Store) head(ctx context.Context, table, col string, rowid int64, n int) (string, int64, error) {
	b, size, err := sqlitex.FieldHead(ctx, s.read, table, col, rowid, int64(n))
	if err != nil {
		return "", size, mapDriverErr(s.path, err)
	}
	return string(wholeRunes(b)), size, nil
}

// wholeRunes drops a character cut off at the end of b.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// detailText is a capped detail field: the value whole, or its head and
// truncated set.
func (s *Store) detailText(ctx context.Context, table, col string, rowid int64, c cappedText) (text string, truncated bool, err error) {
	if !c.big(store.MaxDetailBytes) {
		return c.v.String, false, nil
	}
	h, _, err := s.head(ctx, table, col, rowid, store.MaxDetailBytes)
	return h, true, err
}
