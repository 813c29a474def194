package ioharness

import "database/sql"

// cells is one row's columns, as database/sql hands them (anyCells), read
// as colConv makes of the driver's values.
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

// interner hands out one string per distinct short value, up to a bound.
type interner struct{ m map[string]string }

const (
	internValues = 4096
	internBytes  = 256
)

// of is str for a string already made.
func (in *interner) of(s string) string {
	if k, ok := in.m[s]; ok {
		return k
	}
	if len(s) <= internBytes && len(in.m) < internValues {
		if in.m == nil {
			in.m = map[string]string{}
		}
		in.m[s] = s
	}
	return s
}

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
