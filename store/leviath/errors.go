package leviath

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// newErr is a *store.Error in Leviath's own words: msg is the whole
// reason (store.Error prints the sentinel's text only when it is empty).
func newErr(path string, kind error, msg string, err error) *store.Error {
	return &store.Error{Path: path, Kind: kind, Detail: msg, Err: err}
}

// oneLine keeps an error message on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
