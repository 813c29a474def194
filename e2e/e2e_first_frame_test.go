package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/benchstore"
)

// The real binary on a big store (a million steps): every frame before the
// runs are on screen says it is reading, never "no runs in this store yet"
// or "nothing waits on a human", which would be guesses while the first
// read is under way.
func TestFirstFramesOfABigStoreSayReading(t *testing.T) {
	testkit.Tool(t, "tmux", "the first frames are read from the real binary in tmux")
	path, err := benchstore.Path(benchstore.Shape{Runs: 10_000, Steps: 1_000_000, Open: 5})
	if err != nil {
		t.Fatal(err)
	}
	bin := vigilBinary(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	session := fmt.Sprintf("vigil-first-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	if out, err := tmux("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y", "32",
		"env", "TERM=xterm-256color", bin, "--read-only", "--store", path); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	var frames, reading int
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := tmux("capture-pane", "-p", "-t", session)
		if err != nil {
			t.Fatalf("capture-pane: %v\n%s", err, s)
		}
		if strings.Contains(s, "1 Runs") {
			frames++
		}
		if strings.Contains(s, "reading the store") {
			reading++
		}
		for _, lie := range []string{"no runs in this store yet", "nothing waits on a human"} {
			if strings.Contains(s, lie) {
				t.Fatalf("a first frame says %q of a store that has runs waiting:\n%s", lie, s)
			}
		}
		if strings.Contains(s, "approval 1 ") && !strings.Contains(s, "reading the store") {
			break // the runs and what waits are on screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runs never came on screen; it shows:\n%s", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%d frames captured before the runs, %d of them reading", frames, reading)
}
