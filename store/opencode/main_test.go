package opencode_test

import (
	"os"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// TestMain says in one line what the package's tests skipped and why.
func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
