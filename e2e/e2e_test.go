package e2e

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// The real binary in a real terminal (tmux): start it on a store whose live
// run waits on a human, browse every pane, approve a write with the
// keyboard, and quit. The screen is read back with capture-pane; the window
// title must stay vigil's although the run's output tries to set it; and
// browsing must not change the store file (only the approval writes).
func TestEndToEndInTmux(t *testing.T) {
	testkit.Tool(t, "tmux", "the end-to-end test drives the real binary in tmux")
	dir := t.TempDir()
	bin := vigilBinary(t)
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := func() [32]byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()

	session := fmt.Sprintf("vigil-e2e-%d", os.Getpid())
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// allow-rename on and set-titles on: if the run's output could set the
	// title, tmux would take it.
	tmux("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color", bin, "--store", path)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("set-option", "-t", session, "allow-rename", "on")
	tmux("set-option", "-t", session, "set-titles", "on")

	screen := func() string { return tmux("capture-pane", "-p", "-t", session) }
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q; it shows:\n%s", want, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(k ...string) {
		t.Helper()
		tmux(append([]string{"send-keys", "-t", session}, k...)...)
		time.Sleep(150 * time.Millisecond)
	}

	waitFor("Coordinate the v2.0 release")
	waitFor("5 waiting")
	// Every pane, by number and by tab; the help overlay.
	keys("2", "j")
	waitFor("Timeline · #5 worker: update CH") // the title gives way to its badges
	keys("3", "k")                             // step 2 of the changelog worker: its decision tries to set the title
	waitFor("␛]0;pwned␇")
	keys("4", "G", "g", "5", "Tab", "1", "/", "c", "i")
	waitFor("1 of 4")
	keys("Escape") // alone: ESC followed at once by a key reads as alt+key
	keys("?")
	waitFor("Help · keys")
	keys("?")
	if title := strings.TrimSpace(tmux("display-message", "-p", "-t", session, "#{pane_title}")); strings.Contains(title, "pwned") {
		t.Fatalf("the run's output set the window title: %q", title)
	}
	if name := strings.TrimSpace(tmux("display-message", "-p", "-t", session, "#{window_name}")); strings.Contains(name, "pwned") {
		t.Fatalf("the run's output renamed the window: %q", name)
	}
	if sum() != before {
		t.Fatal("browsing changed the store file")
	}

	// Approve the CHANGELOG write: select it, wait out the misfire guard.
	keys("6", "g", "j")
	waitFor("WRITE CHANGELOG.md")
	time.Sleep(1600 * time.Millisecond)
	keys("a")
	waitFor("Approve write CHANGELOG.md?")
	keys("y")
	waitFor("approved: approval 2")
	keys("q")
	// q ends vigil, and with it the session: wait for the tmux server to go.
	deadline := time.Now().Add(5 * time.Second)
	for exec.Command("tmux", "-S", sock, "has-session", "-t", session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("vigil did not quit on q:\n%s", screen())
		}
		time.Sleep(50 * time.Millisecond)
	}

	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reqs, err := s.Requests(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Kind == store.Approval && r.ID == "2" && r.Decision != string(store.VerdictApprove) {
			t.Fatalf("approval 2 holds %q after approving it in the terminal", r.Decision)
		}
	}
}
