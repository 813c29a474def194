package sqlitex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	sqlite "modernc.org/sqlite"

	"github.com/vigil-run/vigil/store"
)

// ErrKind sorts a driver error into one of store's sentinel kinds, with a
// one-line detail (possibly empty). ok is false for a nil error and for
// cancellation, which callers pass through unchanged.
func ErrKind(path string, err error) (kind error, detail string, ok bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, "", false
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		if emptied(path) {
			return store.ErrNotAStore, "the file is empty", true
		}
		return store.ErrIO, err.Error(), true
	}
	switch code := se.Code() & 0xff; {
	case code == 13, code == 10 && DiskFull(path): // SQLITE_FULL; SQLITE_IOERR writing to a full disk
		return store.ErrIO, "", true
	}
	switch se.Code() & 0xff {
	case 26: // SQLITE_NOTADB
		return store.ErrNotSQLite, "", true
	case 11: // SQLITE_CORRUPT
		return store.ErrCorrupt, "", true
	case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
		return store.ErrLocked, "gave up after 5 s", true
	case 8: // SQLITE_READONLY
		return store.ErrReadOnly, "", true
	case 14: // SQLITE_CANTOPEN
		if !Exists(path) {
			return store.ErrNotFound, "", true
		}
		return store.ErrIO, "cannot open", true
	}
	if emptied(path) {
		return store.ErrNotAStore, "the file is empty", true
	}
	msg, _, _ := strings.Cut(se.Error(), "\n")
	return store.ErrIO, msg, true
}

// emptied reports whether the store file is there and empty: a store
// truncated under an open handle reads as a database without tables, whose
// queries fail with words of the driver's ("sql: no rows in result set",
// "no such table"), not the one line the open gives.
func emptied(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// MapErr turns a driver error into a *store.Error of one of the sentinel
// kinds ("kind: detail"). Errors already worded as a *store.Error, a nil
// error and cancellation pass through unchanged.
func MapErr(path string, err error) error {
	var own *store.Error
	if errors.As(err, &own) {
		return err
	}
	kind, detail, ok := ErrKind(path, err)
	if !ok {
		return err
	}
	e := &store.Error{Path: path, Kind: kind, Err: err}
	switch {
	case kind == store.ErrIO && detail == "":
		e.Detail = fullDetail(path)
	case detail != "":
		e.Detail = store.Because(kind, detail)
	}
	return e
}

// minFree is the room a first write needs beside a store: a -shm (32 KiB)
// and a few WAL frames.
const minFree = 96 << 10

// DiskFull reports whether the file system holding path has less room left
// than a write beside it needs.
func DiskFull(path string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(filepath.Dir(path), &st) != nil {
		return false
	}
	return int64(st.Bavail)*int64(st.Bsize) < minFree
}

// fullDetail is the line for a write that failed for want of room.
func fullDetail(path string) string {
	return "cannot write to the store: the disk is full (" + filepath.Dir(path) + ")"
}

// DiskFullError is the refusal of a write the disk has no room for.
func DiskFullError(path string) error {
	return &store.Error{Path: path, Kind: store.ErrIO, Detail: fullDetail(path)}
}

// IsReadOnly reports SQLITE_READONLY (and its extended codes, such as a
// read-only directory).
func IsReadOnly(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 8
}
