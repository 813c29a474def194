package harness

import (
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// storeErr is a *store.Error in io-harness's wording (schema.Err).
func storeErr(path string, kind error, detail string, err error) *store.Error {
	return schema.Err(path, kind, detail, err)
}

// mapDriverErr turns a driver error into a *store.Error; cancellation and
// errors already worded pass through unchanged.
func mapDriverErr(path string, err error) error { return sqlitex.MapErr(path, err) }
