package leviath

import (
	"os"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// TestMain keeps the tests' fold summaries out of the user's cache
// directory: in one of the process's own, removed after.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vigil-leviath-folds-")
	if err != nil {
		panic(err)
	}
	foldCacheRoot = func() string { return dir }
	code := testkit.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
