package store

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error a source returns for a bad file, a missing
// run or a refused write wraps one of these, so callers test with errors.Is
// whatever the format. Their texts name no format: the adapter's own words
// go in Error.Detail.
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

// Error is the one error type every source returns for a store problem: the
// path it concerns, the sentinel it matches, and one line a person can act
// on.
//
// Detail is that line, worded by the adapter, which knows the format: it
// replaces the sentinel's generic text rather than being appended to it, so
// a Starweaver refusal can say "Starweaver database without migration 2 …"
// and not "not supported by this store: Starweaver database …". Adapters
// that want the sentinel's words first build Detail with Because.
type Error struct {
	Path   string // the file or directory ("" when none applies)
	Kind   error  // one of the sentinels above
	Detail string // the reason in one line; "" says Kind's text
	Err    error  // the underlying cause (a driver or file-system error), if any
}

// Errorf builds an Error whose Detail is the formatted text (none with an
// empty format).
func Errorf(path string, kind, cause error, format string, args ...any) *Error {
	e := &Error{Path: path, Kind: kind, Err: cause}
	if format != "" {
		e.Detail = fmt.Sprintf(format, args...)
	}
	return e
}

// Because is a Detail that starts with the sentinel's words: "no such run:
// 7". With no specifics it is the sentinel's text alone.
func Because(kind error, specific string) string {
	if specific == "" {
		return kind.Error()
	}
	return kind.Error() + ": " + specific
}

// Error is "path: reason", always one line.
func (e *Error) Error() string {
	msg := e.Detail
	if msg == "" && e.Kind != nil {
		msg = e.Kind.Error()
	}
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.Join(strings.Fields(msg), " ")
	}
	if e.Path != "" {
		return e.Path + ": " + msg
	}
	return msg
}

// Is matches the sentinel the error carries.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// RefusedError says a decision was not written, and why, in one line.
type RefusedError struct {
	Key      RequestKey
	Reason   string
	Delivery Delivery
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s not decided: %s", e.Key, e.Reason)
}
