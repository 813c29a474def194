package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// vigilBinary builds vigil once for the tests that run the real binary.
func vigilBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "vigil-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "vigil")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, "..").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	// Decisions made in the explorers these tests start go to the
	// per-user audit log: one of this process's own (a test that reads
	// its log sets XDG_STATE_HOME itself), never the user's.
	state, err := os.MkdirTemp("", "vigil-e2e-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := testkit.Main(m)
	os.RemoveAll(state)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
