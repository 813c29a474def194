package cli

import (
	"os"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// TestMain lets the test binary stand in for vigil when the demo starts its
// harness process (it runs the command line it was given, as vigil would).
func TestMain(m *testing.M) {
	if IsHarness() {
		os.Exit(Execute())
	}
	os.Exit(testkit.Main(m))
}
