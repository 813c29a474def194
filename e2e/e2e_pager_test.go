package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

// o in the timeline hands the selected step to $PAGER with the explorer
// suspended: the pager has the terminal (vigil's frame is gone), and when
// it exits vigil takes the screen back, redraws, and says so. The pager is
// a stub that records what it was given and waits for a key.
func TestPagerSuspendsAndResumesInTmux(t *testing.T) {
	bin := builtVigil(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	record, seen := filepath.Join(dir, "pager-input.txt"), filepath.Join(dir, "pager-file.txt")
	stub := filepath.Join(dir, "pager")
	script := "#!/bin/sh\ncp \"$1\" " + record + "\nprintf '%s' \"$1\" > " + seen + "\nprintf 'STUB PAGER: %s lines\\n' \"$(wc -l < \"$1\" | tr -d ' ')\"\nread answer\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, dir, "PAGER="+stub, "VISUAL="+stub, bin, "--store", path)
	s.waitFor("Coordinate the v2.0 release", 20*time.Second)
	s.tmux("send-keys", "-t", s.session, "3")
	s.waitFor("4 Step 4", 10*time.Second)
	s.tmux("send-keys", "-t", s.session, "o")
	s.waitFor("STUB PAGER:", 10*time.Second)
	if scr := s.screen(); strings.Contains(scr, "1 Runs") || strings.Contains(scr, "3 Timeline") {
		t.Fatalf("vigil still drew over the pager:\n%s", scr)
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"step 4 · 3,300 tokens", "ran make release-dry-run (exit 0)", "run {\n  \"cmd\": \"make release-dry-run\"\n}", "[ok] 12 artifacts"} {
		if !strings.Contains(string(got), want) {
			t.Fatalf("the pager was given no %q:\n%s", want, got)
		}
	}
	s.tmux("send-keys", "-t", s.session, "Enter")
	s.waitFor("closed step 4", 10*time.Second)
	s.waitFor("1 Runs", 5*time.Second)
	if scr := s.screen(); strings.Contains(scr, "STUB PAGER") {
		t.Fatalf("the pager's output is left on vigil's screen:\n%s", scr)
	}
	file, _ := os.ReadFile(seen)
	if _, err := os.Stat(string(file)); !os.IsNotExist(err) {
		t.Fatalf("the file handed to the pager (%s) outlived it: %v", file, err)
	}
	// The explorer answers keys again; E opens the selected request in
	// $VISUAL the same way.
	s.tmux("send-keys", "-t", s.session, "6")
	s.waitFor("WRITE keys/deploy.pub", 5*time.Second)
	// The first pager's words are still on the terminal's main screen,
	// which a suspended explorer shows: wait for the stub's new record.
	os.Remove(record)
	s.tmux("send-keys", "-t", s.session, "E")
	waitForFile(t, record, 10*time.Second)
	if got, _ := os.ReadFile(record); !strings.Contains(string(got), "WRITE keys/deploy.pub") || !strings.Contains(string(got), "1 ssh-ed25519 AAAAC3Nza… deploy@ci") {
		t.Fatalf("the editor was not given the request whole:\n%s", got)
	}
	s.tmux("send-keys", "-t", s.session, "Enter")
	s.waitFor("closed approval 1", 10*time.Second)
	s.tmux("send-keys", "-t", s.session, "q")
	deadline := time.Now().Add(5 * time.Second)
	for !s.ended() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !s.ended() {
		t.Fatalf("q did not quit after the pager:\n%s", s.screen())
	}
}

// c copies the selected step's tool call with OSC 52: tmux, told to take
// the clipboard from what runs in it, has it in its paste buffer, and the
// status bar says what was copied.
func TestCopyReachesTheClipboardInTmux(t *testing.T) {
	bin := builtVigil(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, dir, bin, "--store", path)
	s.tmux("set-option", "-s", "set-clipboard", "on")
	s.waitFor("Coordinate the v2.0 release", 20*time.Second)
	s.tmux("send-keys", "-t", s.session, "3")
	s.waitFor("4 Step 4", 10*time.Second)
	s.tmux("send-keys", "-t", s.session, "c")
	s.waitFor("copied step 4's tool call", 5*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("tmux", "-S", s.sock, "show-buffer").CombinedOutput()
		if string(out) == `run:{"cmd":"make release-dry-run"}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux's buffer holds %q, not the step's tool call", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitForFile waits until path exists and is no longer growing.
func waitForFile(t *testing.T, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := int64(-1)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size() == last {
			return
		} else if err == nil {
			last = fi.Size()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written within %v", path, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
