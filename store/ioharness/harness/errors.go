package harness

import (
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// storeErr is a *store.Error in io-harness's wording: the sentinel's own
// text, then what makes this case specific ("no such run: 7").
func storeErr(path string, kind error, detail string, err error) *store.Error {
	e := &store.Error{Path: path, Kind: kind, Err: err}
	if detail != "" {
		e.Detail = store.Because(kind, detail)
	}
	return e
}

// mapDriverErr turns a driver error into a *store.Error; cancellation and
// errors already worded pass through unchanged.
func mapDriverErr(path string, err error) error { return sqlitex.MapErr(path, err) }
