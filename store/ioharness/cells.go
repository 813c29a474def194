package ioharness

import (
	"database/sql"
	"unsafe"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// cells is one row's columns, as database/sql hands them (anyCells) or as
// SQLite holds them (rawCells, sqlitex.EachRawRow): both read as colConv
// makes of the driver's values, so a row reads the same either way.
type cells interface {
	// nullStr is a text column, kept (a copy of its own, or a string the
	// reader already holds of the same bytes).
	nullStr(c *colConv, i int) sql.NullString
	// peekStr is a text column to look at, not keep: valid during the row.
	peekStr(c *colConv, i int) sql.NullString
	nullInt(c *colConv, i int) sql.NullInt64
}

// str and int64 read a column that must not be NULL, as colConv's do.
func cellStr(x cells, c *colConv, i int) string {
	s := x.nullStr(c, i)
	if !s.Valid {
		c.fail(errNullNotNullable)
	}
	return s.String
}

func cellInt(x cells, c *colConv, i int) int64 {
	n := x.nullInt(c, i)
	if !n.Valid {
		c.fail(errNullNotNullable)
	}
	return n.Int64
}

// anyCells is a row database/sql scanned into any.
type anyCells []any

func (a anyCells) nullStr(c *colConv, i int) sql.NullString { return c.nullStr(a[i]) }
func (a anyCells) peekStr(c *colConv, i int) sql.NullString { return c.nullStr(a[i]) }
func (a anyCells) nullInt(c *colConv, i int) sql.NullInt64  { return c.nullInt(a[i]) }

// rawCells is the row a raw read is on. Text columns in shared are
// interned (a status, a workspace, a provider: the same few values on
// every run); any type but text, integer and NULL goes through the
// driver's own value and colConv.
type rawCells struct {
	r      *sqlitex.RawRow
	shared uint64 // bit i: column i repeats across rows
	in     *interner
}

func (x rawCells) nullStr(c *colConv, i int) sql.NullString {
	switch x.r.Type(i) {
	case sqlitex.Null:
		return sql.NullString{}
	case sqlitex.Text:
		return x.text(i)
	}
	return c.nullStr(x.r.Value(i))
}

// text is a column known to be text, kept.
func (x rawCells) text(i int) sql.NullString {
	b := x.r.Text(i)
	if x.shared&(1<<i) != 0 {
		return sql.NullString{String: x.in.str(b), Valid: true}
	}
	return sql.NullString{String: string(b), Valid: true}
}

func (x rawCells) peekStr(c *colConv, i int) sql.NullString {
	switch x.r.Type(i) {
	case sqlitex.Null:
		return sql.NullString{}
	case sqlitex.Text:
		b := x.r.Text(i)
		return sql.NullString{String: unsafe.String(unsafe.SliceData(b), len(b)), Valid: true}
	}
	return c.nullStr(x.r.Value(i))
}

func (x rawCells) nullInt(c *colConv, i int) sql.NullInt64 {
	switch x.r.Type(i) {
	case sqlitex.Null:
		return sql.NullInt64{}
	case sqlitex.Integer:
		return sql.NullInt64{Int64: x.r.Int64(i), Valid: true}
	}
	return c.nullInt(x.r.Value(i))
}

// interner hands out one string per distinct short value, up to a bound.
type interner struct{ m map[string]string }

const (
	internValues = 4096
	internBytes  = 256
)

func (in *interner) str(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= internBytes && len(in.m) < internValues {
		if in.m == nil {
			in.m = map[string]string{}
		}
		in.m[s] = s
	}
	return s
}
