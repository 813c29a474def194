package sqlitex

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Reading one huge value a piece at a time.
//
// A tool result can be hundreds of megabytes. Every SQL expression over a
// column, substr included, has SQLite load the whole value first (and the
// driver then copies it into Go), so a 200 MB result costs 200–400 MB to
// show its first kilobyte. SQLite's incremental blob I/O (sqlite3_blob_open
// and sqlite3_blob_read) reads a byte range of a TEXT or BLOB value
// straight from its overflow pages. database/sql has no way to it, and
// modernc.org/sqlite exposes neither the blob calls nor the connection's
// sqlite3* handle; the handle is the driver connection's field db, read
// here by reflection (read, never written), and the C calls are
// modernc.org/sqlite/lib's, on a libc.TLS of their own. Should a driver
// release rename the field, blobHandle says so and CopyField reads the
// value the plain way: right, only not bounded (TestCopyFieldIsIncremental
// fails then, so the upgrade is noticed).
//
// The value is read in sessions of up to FieldSession bytes: each opens a
// blob handle inside one short read transaction, reads its pieces into
// memory and closes it, and the connection is let go before the session's
// bytes are written. So a reader slowed by where the bytes go (a pager, a
// pipe nobody reads) never pins the WAL or holds up the store's other
// reads. A session costs a walk of the value's overflow chain to where it
// starts, so sessions are large: a handle per 1 MiB piece made a 200 MB
// trace take 8 s. A value whose length changes between sessions is
// reported (ErrFieldChanged) rather than spliced.

// FieldPiece is how many bytes each sqlite3_blob_read and each write take.
const FieldPiece = 1 << 20

// FieldSession is how many bytes one read transaction reads at most.
var FieldSession = 16 << 20

// ErrFieldChanged: the value was rewritten while CopyField read it.
var ErrFieldChanged = errors.New("the value changed while it was being read")

// errNoBlob: this driver connection's sqlite3* handle cannot be reached.
var errNoBlob = errors.New("sqlite3_blob_open is out of reach of this driver connection")

// CopyField writes the first limit bytes (all of them when limit < 0) of
// the TEXT or BLOB value in column of table's row rowid to w, a piece at a
// time, and returns how many bytes it wrote and how long the value is. A
// NULL value is empty. The table must be a rowid table of the main schema
// and the database UTF-8 (the bytes of a TEXT value are its encoding's).
func CopyField(ctx context.Context, db *sql.DB, table, column string, rowid int64, w io.Writer, limit int64) (written, size int64, err error) {
	size = -1
	var buf []byte
	for {
		n := int64(FieldSession)
		if limit >= 0 {
			n = min(n, limit-written)
		}
		if size >= 0 {
			n = min(n, size-written)
		}
		if size >= 0 && n <= 0 {
			return written, size, nil
		}
		n = max(n, 0)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		got, total, err := readSession(ctx, db, table, column, rowid, written, buf[:n])
		if errors.Is(err, errNoBlob) {
			return copyWhole(ctx, db, table, column, rowid, w, limit)
		}
		if err != nil {
			return written, size, err
		}
		if size >= 0 && total != size {
			return written, size, ErrFieldChanged
		}
		size = total
		for at := 0; at < got; at += FieldPiece {
			if _, err := w.Write(buf[at:min(at+FieldPiece, got)]); err != nil {
				return written, size, err
			}
			written += int64(min(FieldPiece, got-at))
		}
		if got == 0 && written < size && (limit < 0 || written < limit) {
			return written, size, ErrFieldChanged
		}
	}
}

// FieldHead is the first n bytes of a value (CopyField into memory).
func FieldHead(ctx context.Context, db *sql.DB, table, column string, rowid int64, n int64) (head []byte, size int64, err error) {
	var b bytesWriter
	_, size, err = CopyField(ctx, db, table, column, rowid, &b, n)
	return b, size, err
}

// FieldTail is the last n bytes (at most FieldSession) of a value whose
// length is size, read in one session; ErrFieldChanged when the value is
// not that long any more.
func FieldTail(ctx context.Context, db *sql.DB, table, column string, rowid, size int64, n int) ([]byte, error) {
	n = min(n, FieldSession, int(max(size, 0)))
	off := size - int64(n)
	buf := make([]byte, n)
	got, total, err := readSession(ctx, db, table, column, rowid, off, buf)
	if errors.Is(err, errNoBlob) {
		var b bytesWriter
		if _, total, err = copyWhole(ctx, db, table, column, rowid, &b, -1); err != nil {
			return nil, err
		}
		if total != size {
			return nil, ErrFieldChanged
		}
		return b[off:], nil
	}
	if err != nil {
		return nil, err
	}
	if total != size || got != n {
		return nil, ErrFieldChanged
	}
	return buf, nil
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// readSession reads len(p) bytes of the value from offset off on one blob
// handle, and the value's whole length. A NULL value reads as empty.
func readSession(ctx context.Context, db *sql.DB, table, column string, rowid, off int64, p []byte) (n int, size int64, err error) {
	err = onBlobConn(ctx, db, off == 0, func(h sqlite3Handle) error {
		n, size, err = h.read(table, column, rowid, off, p)
		return err
	})
	return n, size, err
}

// onBlobConn runs fn on the sqlite3* of one connection of db, held for
// fn alone: one read transaction. checkEncoding, once per value, makes
// sure the bytes are the database's text as stored (UTF-8).
func onBlobConn(ctx context.Context, db *sql.DB, checkEncoding bool, fn func(sqlite3Handle) error) error {
	sc, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer sc.Close()
	if checkEncoding {
		var enc string
		if err := sc.QueryRowContext(ctx, "PRAGMA encoding").Scan(&enc); err != nil {
			return err
		}
		if enc != "UTF-8" {
			return errNoBlob
		}
	}
	return sc.Raw(func(dc any) error {
		h, ok := blobHandle(dc)
		if !ok {
			return errNoBlob
		}
		return fn(h)
	})
}

// sqlite3Handle is a driver connection's sqlite3* pointer.
type sqlite3Handle uintptr

// blobHandle reaches the sqlite3* behind a connection sql.Conn.Raw passes
// on: this package's wrapper, then the driver's own connection, whose field
// db holds it.
func blobHandle(dc any) (sqlite3Handle, bool) {
	for {
		switch x := dc.(type) {
		case *conn:
			dc = x.Conn
			continue
		case interface{ Unwrap() driver.Conn }:
			dc = x.Unwrap()
			continue
		}
		break
	}
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Type().String() != "*sqlite.conn" {
		return 0, false
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return 0, false
	}
	return sqlite3Handle(f.Uint()), true
}

// read opens a read-only blob handle on the value, reads p from off in
// pieces, and closes it: the handle's statement is the read transaction,
// so it ends here.
func (h sqlite3Handle) read(table, column string, rowid, off int64, p []byte) (n int, size int64, err error) {
	got, size, err := h.scan(context.Background(), table, column, rowid, off, int64(len(p)), time.Time{}, 0, func(c []byte) error {
		copy(p[n:], c)
		n += len(c)
		return nil
	})
	if err != nil {
		return 0, size, err
	}
	return int(got), size, nil
}

// scan opens a read-only blob handle on the value and hands fn up to want
// bytes from off (to the end when want < 0), a piece at a time, from
// SQLite's own buffer: fn must not keep the slice. It stops early, after a
// piece, once ctx is done, or once until is past (the zero time: never)
// and at least least bytes are read. The
// handle's statement is the read transaction, so it ends here.
func (h sqlite3Handle) scan(ctx context.Context, table, column string, rowid, off, want int64, until time.Time, least int64, fn func([]byte) error) (n, size int64, err error) {
	tls := libc.NewTLS()
	defer tls.Close()
	var cs []uintptr
	defer func() {
		for _, c := range cs {
			libc.Xfree(tls, c)
		}
	}()
	cstr := func(s string) uintptr {
		c, err := libc.CString(s)
		if err != nil {
			panic(err) // out of C memory for a table name
		}
		cs = append(cs, c)
		return c
	}
	zDb, zTable, zCol := cstr("main"), cstr(table), cstr(column)
	pp := libc.Xmalloc(tls, 8)
	if pp == 0 {
		return 0, 0, errors.New("sqlite: out of memory")
	}
	cs = append(cs, pp)
	*(*uintptr)(unsafePointer(pp)) = 0
	rc := sqlite3.Xsqlite3_blob_open(tls, uintptr(h), zDb, zTable, zCol, rowid, 0, pp)
	blob := *(*uintptr)(unsafePointer(pp))
	if blob != 0 {
		defer sqlite3.Xsqlite3_blob_close(tls, blob)
	}
	if rc != sqlite3.SQLITE_OK {
		msg := libc.GoString(sqlite3.Xsqlite3_errmsg(tls, uintptr(h)))
		if rc == sqlite3.SQLITE_ERROR && msg == "cannot open value of type null" {
			return 0, 0, nil
		}
		return 0, 0, fmt.Errorf("sqlite3_blob_open %s.%s row %d: %s (%d)", table, column, rowid, msg, rc)
	}
	size = int64(sqlite3.Xsqlite3_blob_bytes(tls, blob))
	if want < 0 || want > size-off {
		want = size - off
	}
	if want <= 0 {
		return 0, size, nil
	}
	piece := min(want, FieldPiece)
	buf := libc.Xmalloc(tls, uint64(piece))
	if buf == 0 {
		return 0, size, errors.New("sqlite: out of memory")
	}
	defer libc.Xfree(tls, buf)
	c := unsafe.Slice((*byte)(unsafePointer(buf)), piece)
	for n < want {
		k := min(piece, want-n)
		if rc := sqlite3.Xsqlite3_blob_read(tls, blob, buf, int32(k), int32(off+n)); rc != sqlite3.SQLITE_OK {
			if rc == sqlite3.SQLITE_ABORT {
				return 0, size, ErrFieldChanged
			}
			return 0, size, fmt.Errorf("sqlite3_blob_read %s.%s row %d: %s (%d)", table, column, rowid, libc.GoString(sqlite3.Xsqlite3_errmsg(tls, uintptr(h))), rc)
		}
		if err := fn(c[:k]); err != nil {
			return n, size, err
		}
		n += k
		if err := ctx.Err(); err != nil {
			return n, size, err
		}
		if !until.IsZero() && n >= least && time.Now().After(until) {
			break
		}
	}
	return n, size, nil
}

// copyWhole is CopyField the plain way, for a connection without blob I/O:
// the value is loaded whole.
func copyWhole(ctx context.Context, db *sql.DB, table, column string, rowid int64, w io.Writer, limit int64) (written, size int64, err error) {
	var v []byte
	q := fmt.Sprintf(`SELECT CAST("%s" AS BLOB) FROM "%s" WHERE rowid = ?`, column, table)
	if err := db.QueryRowContext(ctx, q, rowid).Scan(&v); err != nil {
		return 0, 0, err
	}
	size = int64(len(v))
	if limit >= 0 && int64(len(v)) > limit {
		v = v[:limit]
	}
	for len(v) > 0 {
		k := min(len(v), FieldPiece)
		if _, err := w.Write(v[:k]); err != nil {
			return written, size, err
		}
		written += int64(k)
		v = v[k:]
	}
	return written, size, nil
}

// unsafePointer turns a C address from libc into a pointer (the form go
// vet accepts: the uintptr is not Go memory).
func unsafePointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
