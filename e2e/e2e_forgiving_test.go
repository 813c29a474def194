package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

// Issue 29 in the real binary, in tmux: q in the help closes it and vigil
// runs on (item 11); enter on a write in the queue hands it whole to
// $PAGER (item 17); ":" jumps to a run by its id (item 16); an open y/n
// prompt closes on a stray key, saying so (item 12).
func TestForgivingKeysInTmux(t *testing.T) {
	bin := builtVigil(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "pager-input.txt")
	stub := filepath.Join(dir, "pager")
	script := "#!/bin/sh\ncp \"$1\" " + record + "\nprintf 'STUB PAGER\\n'\nread answer\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, dir, "PAGER="+stub, bin, "--store", path)
	s.waitFor("Coordinate the v2.0 release", 20*time.Second)
	keys := func(k ...string) { s.tmux(append([]string{"send-keys", "-t", s.session}, k...)...) }

	keys("?")
	s.waitFor("Help · keys", 10*time.Second)
	keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(s.screen(), "Help · keys") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if s.ended() || strings.Contains(s.screen(), "Help · keys") {
		t.Fatalf("q in the help: ended %v\n%s", s.ended(), s.screen())
	}
	s.waitFor("1 Runs", 5*time.Second)

	keys("6")
	s.waitFor("WRITE keys/deploy.pub", 10*time.Second)
	keys("Enter")
	waitForFile(t, record, 10*time.Second)
	if got, _ := os.ReadFile(record); !strings.Contains(string(got), "WRITE keys/deploy.pub") || !strings.Contains(string(got), "1 ssh-ed25519 AAAAC3Nza… deploy@ci") {
		t.Fatalf("enter did not give the pager the request whole:\n%s", got)
	}
	keys("Enter")
	s.waitFor("closed approval 1", 10*time.Second)

	keys("j")
	s.waitFor("WRITE CHANGELOG.md", 10*time.Second)
	time.Sleep(2 * time.Second) // past the misfire guard's pause
	keys("a")
	s.waitFor("Approve write CHANGELOG.md?", 10*time.Second)
	keys("x")
	s.waitFor("not decided: x is not y", 10*time.Second)

	keys(":")
	s.waitFor("tab completes", 10*time.Second)
	keys("r", "u", "Tab", "1", "Enter")
	s.waitFor("#1 Fix the flaky parser test", 10*time.Second)
	s.waitFor("ran go test ./... (exit 0)", 10*time.Second)

	keys("q")
	deadline = time.Now().Add(10 * time.Second)
	for !s.ended() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !s.ended() {
		t.Fatalf("q did not quit:\n%s", s.screen())
	}
}
