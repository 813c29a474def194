package leviath

import "strings"

// Error is a Leviath source error: the path it concerns, one of the store
// package's sentinels (so callers can test with errors.Is), and a one-line
// reason in Leviath's own words. (store.Error prints the sentinel's text,
// which names io-harness; this type prints only Msg.)
type Error struct {
	Path string
	Kind error  // store.ErrNotFound, store.ErrNotAStore, store.ErrIO, store.ErrCorrupt, store.ErrNewerFormat, …
	Msg  string // one line
	Err  error  // the underlying error, if any
}

func (e *Error) Error() string {
	msg := oneLine(e.Msg)
	if msg == "" {
		msg = e.Kind.Error()
	}
	if e.Path != "" {
		return e.Path + ": " + msg
	}
	return msg
}

// Is matches the sentinel the error wraps.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

func newErr(path string, kind error, msg string, err error) *Error {
	return &Error{Path: path, Kind: kind, Msg: msg, Err: err}
}

// oneLine keeps an error message on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

var _ error = (*Error)(nil)
