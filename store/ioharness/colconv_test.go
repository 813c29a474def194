package ioharness

import (
	"database/sql"
	"testing"
)

// colConv reads every driver type as sql.Rows.Scan into the Null types did.
func TestColConvAsScan(t *testing.T) {
	for _, v := range []any{nil, int64(-3), "12", "x", []byte("7"), float64(2), true} {
		var c colConv
		var wantS sql.NullString
		errS := wantS.Scan(v)
		if got := c.nullStr(v); got != wantS || (c.err != nil) != (errS != nil) {
			t.Errorf("nullStr(%#v) = %+v, %v; Scan gives %+v, %v", v, got, c.err, wantS, errS)
		}
		c = colConv{}
		var wantI sql.NullInt64
		errI := wantI.Scan(v)
		if got := c.nullInt(v); got != wantI || (c.err != nil) != (errI != nil) {
			t.Errorf("nullInt(%#v) = %+v, %v; Scan gives %+v, %v", v, got, c.err, wantI, errI)
		}
	}
	var c colConv
	c.str(nil)
	if c.err == nil {
		t.Error("NULL in a non-null string column: no error")
	}
	c = colConv{}
	c.int64(nil)
	if c.err == nil {
		t.Error("NULL in a non-null integer column: no error")
	}
}
