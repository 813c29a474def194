package sqlitex

import (
	"context"
	"errors"
	"strings"

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
		return store.ErrIO, err.Error(), true
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
	msg, _, _ := strings.Cut(se.Error(), "\n")
	return store.ErrIO, msg, true
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
	if detail != "" {
		e.Detail = store.Because(kind, detail)
	}
	return e
}

// IsReadOnly reports SQLITE_READONLY (and its extended codes, such as a
// read-only directory).
func IsReadOnly(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 8
}
