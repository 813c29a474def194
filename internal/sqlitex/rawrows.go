package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Reading many rows without database/sql.
//
// Listing 100 k runs of ten columns spent as long in the layers between
// SQLite and vigil as in SQLite: database/sql's locks and conversions per
// value, the driver boxing each value into an interface and copying each
// text into a string of its own (a million small allocations, and the
// garbage collector's work on them). EachRawRow steps one statement on the
// connection's own sqlite3* handle (the handle reached as blob.go reaches
// it) and lets the caller read each column where SQLite holds it, so a
// value the caller already has (a status, a workspace every run shares)
// costs no copy.
//
// The caller must come out where database/sql would have: RawRow.Value is
// the very value the driver's Next gives for a column, for the caller to
// convert as it converts the driver's. A read the raw path cannot be sure
// of is left to database/sql (ErrNoRaw): a handle out of reach, a column
// the driver would turn into a time (declared DATE, DATETIME or TIMESTAMP),
// an argument that is not an integer, or any error from SQLite (the driver
// then gives the error in the form callers know).

// ErrNoRaw says EachRawRow did not read (all of) the rows: read them
// through database/sql instead, dropping whatever fn was given.
var ErrNoRaw = errors.New("sqlitex: read this through database/sql")

// Column types, as SQLite reports them.
const (
	Integer = sqlite3.SQLITE_INTEGER
	Float   = sqlite3.SQLITE_FLOAT
	Text    = sqlite3.SQLITE_TEXT
	Blob    = sqlite3.SQLITE_BLOB
	Null    = sqlite3.SQLITE_NULL
)

// RawRow is the row a statement is on. Its bytes are SQLite's, valid only
// until fn returns.
//
// Each column is read from its sqlite3_value with the sqlite3_value_*
// calls, which take no lock. Every sqlite3_column_* call takes the
// connection's mutex, in and out, and a text column read as type, text and
// length took it three times: on 100 k runs of ten columns that was the
// most of what a raw read cost. Reading the values unlocked is what SQLite
// allows of one thread at a time on a connection (sqlite3_column_value's
// "unprotected" values), and fn runs inside database/sql's Conn.Raw, which
// lends the connection to this goroutine alone.
//
// The values are found where sqlite3_column_value finds them, the row's
// array of Mem (Vdbe.pResultRow, nResColumn long), read through the
// types modernc's build of SQLite declares, so a layout that moves does
// not compile; sqlite3_column_value itself is asked when the row is not
// there to read (TestRawRowValuesAreColumnValues holds the two equal).
type RawRow struct {
	tls  *libc.TLS
	stmt uintptr
	row  uintptr // the row's first Mem, 0: ask sqlite3_column_value
	cols int
}

// memSize is the size of one Mem, the stride of a result row.
const memSize = unsafe.Sizeof(sqlite3.TMem{})

// at points r at the row the statement has just stepped onto.
func (r *RawRow) at() {
	vm := (*sqlite3.TVdbe)(unsafePointer(r.stmt))
	r.row, r.cols = vm.FpResultRow, int(vm.FnResColumn)
}

// val is column i's sqlite3_value on this row.
func (r *RawRow) val(i int) uintptr {
	if r.row == 0 || i < 0 || i >= r.cols {
		// SQLite's own answer: out of range, a NULL and SQLITE_RANGE.
		return sqlite3.Xsqlite3_column_value(r.tls, r.stmt, int32(i))
	}
	return r.row + uintptr(i)*memSize
}

// Type is column i's storage class (Integer, Float, Text, Blob, Null).
func (r *RawRow) Type(i int) int { return int(sqlite3.Xsqlite3_value_type(r.tls, r.val(i))) }

// Int64 is column i as an integer (for an Integer column).
func (r *RawRow) Int64(i int) int64 { return sqlite3.Xsqlite3_value_int64(r.tls, r.val(i)) }

// Text is a Text column's bytes where SQLite holds them: copy what is
// kept.
func (r *RawRow) Text(i int) []byte {
	v := r.val(i)
	return r.bytes(sqlite3.Xsqlite3_value_text(r.tls, v), v)
}

// Blob is a Blob column's bytes where SQLite holds them.
func (r *RawRow) Blob(i int) []byte {
	v := r.val(i)
	return r.bytes(sqlite3.Xsqlite3_value_blob(r.tls, v), v)
}

func (r *RawRow) bytes(p, v uintptr) []byte {
	n := sqlite3.Xsqlite3_value_bytes(r.tls, v)
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafePointer(p)), n)
}

// Value is column i as modernc's driver gives it to database/sql: int64,
// float64, string, []byte (nil when empty) or nil.
func (r *RawRow) Value(i int) any {
	switch r.Type(i) {
	case Integer:
		return r.Int64(i)
	case Float:
		return sqlite3.Xsqlite3_value_double(r.tls, r.val(i))
	case Text:
		return string(r.Text(i))
	case Blob:
		b := r.Blob(i)
		if len(b) == 0 {
			return []byte(nil)
		}
		return append([]byte(nil), b...)
	}
	return nil
}

// rawCheckRows is how often EachRawRow looks at its context.
const rawCheckRows = 256

// EachRawRow runs the read q with integer args on one connection of db and
// hands each row to fn; the statement is finished before it returns, so no
// read transaction outlives the call. fn's error is returned as it is;
// ErrNoRaw means the rows are to be read through database/sql.
func EachRawRow(ctx context.Context, db *sql.DB, q string, args []any, fn func(*RawRow) error) error {
	ints := make([]int64, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			ints[i] = v
		case int:
			ints[i] = int64(v)
		default:
			return ErrNoRaw
		}
	}
	sc, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.Raw(func(dc any) error {
		h, ok := blobHandle(dc)
		if !ok {
			return ErrNoRaw
		}
		return h.eachRow(ctx, q, ints, fn)
	})
}

func (h sqlite3Handle) eachRow(ctx context.Context, q string, args []int64, fn func(*RawRow) error) error {
	tls := libc.NewTLS()
	defer tls.Close()
	zSQL, err := libc.CString(q)
	if err != nil {
		return ErrNoRaw
	}
	defer libc.Xfree(tls, zSQL)
	pp := libc.Xmalloc(tls, 8)
	if pp == 0 {
		return ErrNoRaw
	}
	defer libc.Xfree(tls, pp)
	*(*uintptr)(unsafePointer(pp)) = 0
	rc := sqlite3.Xsqlite3_prepare_v2(tls, uintptr(h), zSQL, -1, pp, 0)
	stmt := *(*uintptr)(unsafePointer(pp))
	if stmt != 0 {
		defer sqlite3.Xsqlite3_finalize(tls, stmt)
	}
	if rc != sqlite3.SQLITE_OK || stmt == 0 {
		return ErrNoRaw
	}
	if int(sqlite3.Xsqlite3_bind_parameter_count(tls, stmt)) != len(args) {
		return ErrNoRaw
	}
	for i, a := range args {
		if sqlite3.Xsqlite3_bind_int64(tls, stmt, int32(i+1), a) != sqlite3.SQLITE_OK {
			return ErrNoRaw
		}
	}
	for i := range int(sqlite3.Xsqlite3_column_count(tls, stmt)) {
		// The driver parses text in such a column into a time.Time.
		switch strings.ToUpper(libc.GoString(sqlite3.Xsqlite3_column_decltype(tls, stmt, int32(i)))) {
		case "DATE", "DATETIME", "TIMESTAMP":
			return ErrNoRaw
		}
	}
	row := RawRow{tls: tls, stmt: stmt}
	for n := 0; ; n++ {
		if n%rawCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		switch sqlite3.Xsqlite3_step(tls, stmt) {
		case sqlite3.SQLITE_ROW:
			row.at()
			if err := fn(&row); err != nil {
				return err
			}
		case sqlite3.SQLITE_DONE:
			return nil
		default:
			return ErrNoRaw
		}
	}
}
