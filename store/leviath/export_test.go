package leviath

import "testing"

// BuildFixture writes the fixture runs directory under dir and returns its
// path, for the package's external tests (the explorer-and-CLI agreement
// check), which cannot reach the generator.
func BuildFixture(t testing.TB, dir string) string { return buildFixture(t, dir).runs }
