package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the store returns for a bad file wraps one of
// these, so callers can test with errors.Is and still print one clear line.
var (
	ErrNotFound     = errors.New("no such file")
	ErrIsDirectory  = errors.New("is a directory, not a store file")
	ErrNotSQLite    = errors.New("not a SQLite database")
	ErrCorrupt      = errors.New("damaged store (truncated or corrupt)")
	ErrNotAStore    = errors.New("not a run store vigil reads")
	ErrNewerFormat  = errors.New("written in a newer format than vigil reads")
	ErrLocked       = errors.New("store is locked by another process")
	ErrReadOnly     = errors.New("store is read-only")
	ErrExists       = errors.New("a file already exists there")
	ErrNoSuchRun    = errors.New("no such run")
	ErrNoSuchReq    = errors.New("no such request")
	ErrUnsupported  = errors.New("not supported by this store")
	ErrNotResumable = errors.New("run cannot be resumed")
	// ErrIO is a store that cannot be read for a reason none of the others name.
	ErrIO = errors.New("cannot read store")
)

// Error is a store error with the path it concerns and a one-line reason.
type Error struct {
	Path   string
	Kind   error  // one of the sentinels above
	Detail string // what makes this case specific (may be empty)
	Err    error  // the underlying driver error, if any
}

func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Path != "" {
		msg = e.Path + ": " + msg
	}
	return msg
}

func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

func storeErr(path string, kind error, detail string, err error) *Error {
	return &Error{Path: path, Kind: kind, Detail: detail, Err: err}
}

// RefusedError says a decision was not written, and why, in one line.
type RefusedError struct {
	Key      RequestKey
	Reason   string
	Delivery Delivery
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s not decided: %s", e.Key, e.Reason)
}
