package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"io"
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

// cutField notes in d a field cut to its head, and its whole length.
func cutField(d *store.StepDetail, name string, size int64) {
	d.Truncated = append(d.Truncated, name)
	if d.FieldBytes == nil {
		d.FieldBytes = map[string]int64{}
	}
	d.FieldBytes[name] = size
}

// stepFieldCols are the fields WriteStepField writes, by StepDetail's names.
var stepFieldCols = map[string]string{"result": "result", "prompt": "prompt", "tool call": "tool_call"}

// WriteStepField writes one text field of a step row whole, a piece at a
// time, as the store holds it (store.FieldWriter).
func (s *Store) WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	var runCol int64
	var step int
	err = s.read.QueryRowContext(ctx, "SELECT run_id, step FROM steps WHERE id = ?", rowID).Scan(&runCol, &step)
	if err == sql.ErrNoRows || (err == nil && runCol != run) {
		return storeErr(s.path, store.ErrNoSuchRun, fmt.Sprintf("run %s has no step row %d", runID, rowID), nil)
	}
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	table, col, key := "steps", stepFieldCols[field], rowID
	if field == "turn" && s.si().has("step_turns") {
		err := s.read.QueryRowContext(ctx, "SELECT rowid FROM step_turns WHERE run_id = ? AND step = ?", run, step).Scan(&key)
		if err == sql.ErrNoRows {
			return nil // no turn recorded: empty
		}
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		table, col = "step_turns", "text"
	}
	if col == "" {
		return fmt.Errorf("%s: a step has no field %q to write whole", s.path, field)
	}
	return s.writeField(ctx, w, table, col, key, cappedText{n: sql.NullInt64{Int64: timelineSQLBytes + 1, Valid: true}})
}
