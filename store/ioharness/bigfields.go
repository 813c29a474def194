package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// leftOut reports a value SQL left out for its size, whatever the cap.
func (c cappedText) leftOut() bool { return !c.v.Valid && c.n.Valid }

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

// stepFieldCols are the steps row's fields WriteStepField writes, by
// StepDetail's names (sideFields are the others).
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
		if table, col, key, err = s.sideField(ctx, field, run, step); err != nil {
			return err
		}
	}
	return s.writeField(ctx, w, table, col, key, cappedText{n: sql.NullInt64{Valid: true}}) // left out: copied
}

// headAt is col as two result columns, for a field shown by its head: the
// value's first n characters when it is at most timelineSQLBytes long (SQL
// loads no longer one), else NULL; and its length in bytes. headOf makes
// the head of what it reads.
func headAt(col string, n int) string {
	return fmt.Sprintf("CASE WHEN octet_length(%[1]s) <= %[3]d THEN substr(%[1]s, 1, %[2]d) END, octet_length(%[1]s)", col, n, timelineSQLBytes)
}

// headOf is the head, at most n bytes, of a field read through headAt (or
// capped) in table's row rowid, and the value's whole length when the
// head is not all of it (else 0). A value SQL left out for its size is
// read from the store a piece at a time: call it after the query that
// read c is done with the connection.
func (s *Store) headOf(ctx context.Context, table, col string, rowid int64, c cappedText, n int) (string, int64, error) {
	if !c.n.Valid {
		return c.v.String, 0, nil // NULL
	}
	t := c.v.String
	if !c.v.Valid {
		h, _, err := s.head(ctx, table, col, rowid, n)
		if err != nil {
			return "", 0, err
		}
		t = h
	}
	t = cutUTF8(t, n)
	if int64(len(t)) < c.n.Int64 {
		return t, c.n.Int64, nil
	}
	return t, 0, nil
}

// sideFields are the fields of other tables than steps that WriteStepField
// writes whole, by the prefix of their StepDetail name
// (store.ObservationField, store.EditField): the table, the column, and
// the Rust function that writes it.
var sideFields = map[string]struct{ table, col string }{
	"observation": {"ledger_observations", "text"}, // Store::record_observations (src/state/trace.rs)
	"edit":        {"edits", "hunk"},               // Store::record_edit (src/state/trace.rs)
}

// sideField finds the row behind a side field's name ("observation 12"):
// its table, column and row id, checked to be a row of run under the
// step's number.
func (s *Store) sideField(ctx context.Context, field string, run int64, step int) (table, col string, rowid int64, err error) {
	kind, num, ok := strings.Cut(field, " ")
	f, known := sideFields[kind]
	id, perr := strconv.ParseInt(num, 10, 64)
	if !ok || !known || perr != nil || !s.si().has(f.table) {
		return "", "", 0, fmt.Errorf("%s: a step has no field %q to write whole", s.path, field)
	}
	var rowRun int64
	var rowStep int
	err = s.read.QueryRowContext(ctx, "SELECT run_id, step FROM "+f.table+" WHERE id = ?", id).Scan(&rowRun, &rowStep)
	if err == sql.ErrNoRows || (err == nil && (rowRun != run || rowStep != step)) {
		return "", "", 0, storeErr(s.path, store.ErrNoSuchRun, fmt.Sprintf("run %d has no %s row %d at step %d", run, f.table, id, step), nil)
	}
	if err != nil {
		return "", "", 0, mapDriverErr(s.path, err)
	}
	return f.table, f.col, id, nil
}
