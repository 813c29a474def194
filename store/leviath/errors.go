package leviath

import (
	"os"
	"strings"

	"github.com/vigil-run/vigil/internal/heldfiles"
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

// checkRegular keeps f only if it is a regular file.
func checkRegular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, store.NotRegular(f.Name(), fi.Mode())
	}
	return f, nil
}

// refuseHeld refuses a file this process has open as a SQLite database
// (an io-harness store named run.lvr, say): opening and closing it here
// would drop that connection's locks (internal/heldfiles), and it is no
// Leviath file anyway.
func refuseHeld(p string) error {
	if heldfiles.Held(p) {
		return newErr(p, store.ErrNotAStore, "a SQLite database this process has open, not a Leviath file", nil)
	}
	return nil
}
