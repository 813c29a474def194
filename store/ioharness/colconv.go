package ioharness

import (
	"database/sql"
	"errors"
)

// colConv turns a column scanned into any into what sql.Rows.Scan would
// have made of it: the driver's int64, string and NULL directly, anything
// else through the Null types' Scan. The first error sticks.
type colConv struct{ err error }

var errNullNotNullable = errors.New("converting NULL to a non-null column is unsupported")

func (c *colConv) nullStr(v any) sql.NullString {
	switch x := v.(type) {
	case nil:
		return sql.NullString{}
	case string:
		return sql.NullString{String: x, Valid: true}
	}
	var n sql.NullString
	if err := n.Scan(v); err != nil && c.err == nil {
		c.err = err
	}
	return n
}

func (c *colConv) str(v any) string {
	if v == nil {
		c.fail(errNullNotNullable)
		return ""
	}
	return c.nullStr(v).String
}

func (c *colConv) nullInt(v any) sql.NullInt64 {
	switch x := v.(type) {
	case nil:
		return sql.NullInt64{}
	case int64:
		return sql.NullInt64{Int64: x, Valid: true}
	}
	var n sql.NullInt64
	if err := n.Scan(v); err != nil && c.err == nil {
		c.err = err
	}
	return n
}

func (c *colConv) int64(v any) int64 {
	if v == nil {
		c.fail(errNullNotNullable)
		return 0
	}
	return c.nullInt(v).Int64
}

func (c *colConv) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}
