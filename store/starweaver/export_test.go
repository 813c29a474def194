package starweaver

import "testing"

// BuildV07 writes the 0.7 scenario for the package's external tests (the
// explorer-and-CLI agreement check), which cannot reach the generator.
func BuildV07(t testing.TB, dir string) string { return buildV07(t, dir) }
