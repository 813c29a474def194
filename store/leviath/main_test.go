package leviath

import (
	"os"
	"testing"
)

// TestMain keeps the tests' fold summaries out of the user's cache
// directory: in one of the process's own, removed after.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vigil-leviath-folds-")
	if err != nil {
		panic(err)
	}
	foldCacheRoot = func() string { return dir }
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
