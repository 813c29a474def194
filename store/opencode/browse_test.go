package opencode_test

import (
	"testing"

	"github.com/vigil-run/vigil/store"
)

// browse opens db as a user browsing it does (read-only), closed when the
// test ends.
func browse(t *testing.T, db string) store.Source {
	t.Helper()
	src, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
