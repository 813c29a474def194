package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The real binary in tmux, told by another process that a run waits: a
// python3 writer commits a pending approval the way io-harness's
// put_pending does, and within a second the pane's title reads
// "◆ 1 waiting · vigil" and the window's bell flag is up. On quitting, the
// title vigil set is gone.
func TestWaitingRequestTitlesAndRingsInTmux(t *testing.T) {
	testkit.Tool(t, "tmux", "the end-to-end test drives the real binary in tmux")
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) puts the pending request")
	dir := t.TempDir()
	bin := vigilBinary(t)
	path := filepath.Join(dir, "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := w.StartRun(ctx, "write out.txt", dir)
	if err == nil {
		_, err = w.AcquireLease(ctx, run, time.Hour) // this process drives it: alive
	}
	if err == nil {
		err = w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read notes.txt", ToolCall: `read_file:{"path":"notes.txt"}`, Result: "[read]", Tokens: 900})
	}
	w.Close()
	if err != nil {
		t.Fatal(err)
	}

	session := fmt.Sprintf("vigil-notify-%d", os.Getpid())
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", bin, "--store", path)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("set-option", "-t", session, "remain-on-exit", "on") // to read the title after vigil quits
	format := func(f string) string {
		return strings.TrimSpace(tmux("display-message", "-p", "-t", session, f))
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tmux("capture-pane", "-p", "-t", session), "nothing waits on a human") {
		if time.Now().After(deadline) {
			t.Fatalf("vigil never came up:\n%s", tmux("capture-pane", "-p", "-t", session))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if title := format("#{pane_title}"); strings.Contains(title, "waiting") {
		t.Fatalf("title %q with nothing waiting", title)
	}
	if format("#{window_bell_flag}") != "0" {
		t.Fatal("the bell flag is up before anything waits")
	}

	py := `import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=5)
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (?, ?, ?, ?, ?)", (int(sys.argv[2]), 2, "write", "out.txt", "DONE\n"))
db.commit()
db.close()`
	if out, err := exec.Command("python3", "-c", py, path, run).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	committed := time.Now()
	for {
		title := format("#{pane_title}")
		if title == "◆ 1 waiting · vigil" {
			break
		}
		if time.Since(committed) > time.Second {
			t.Fatalf("1 s after the commit the pane title is %q", title)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("title after %v", time.Since(committed).Round(time.Millisecond))
	for format("#{window_bell_flag}") != "1" {
		if time.Since(committed) > time.Second {
			t.Fatal("1 s after the commit the window's bell flag is not set")
		}
		time.Sleep(20 * time.Millisecond)
	}

	tmux("send-keys", "-t", session, "q")
	deadline = time.Now().Add(5 * time.Second)
	for format("#{pane_dead}") != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("vigil did not quit on q:\n%s", tmux("capture-pane", "-p", "-t", session))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if title := format("#{pane_title}"); strings.Contains(title, "waiting") || strings.Contains(title, "vigil") {
		t.Fatalf("the title vigil set outlived it: %q", title)
	}
}
