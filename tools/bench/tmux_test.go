package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// A control client that ends under the bench (as one did twice, failing
// every later figure with "write |1: broken pipe") is replaced, and the
// window's program is still there to measure.
func TestTermOutlivesItsControlClient(t *testing.T) {
	testkit.Tool(t, "tmux", "the bench drives vigil in tmux")
	term, err := newTerm(t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	defer term.close()
	if _, err := term.start("sh", "-c", "echo still-here; sleep 60"); err != nil {
		t.Fatal(err)
	}
	if _, ok := term.waitFor(func(s string) bool { return strings.Contains(s, "still-here") }, 5*time.Second); !ok {
		t.Fatalf("the program never showed: %q", term.screen())
	}
	old := term.ctl
	old.cmd.Process.Kill()
	// The server holds the client's pipes (tmux passes them over), so the
	// client is gone once the server has noticed and closed them.
	ended := make(chan struct{})
	go func() {
		for range old.replies {
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the killed control client's output never ended")
	}
	if s := term.screen(); !strings.Contains(s, "still-here") {
		t.Fatalf("after the control client ended, the screen reads %q", s)
	}
	if term.ctl == old {
		t.Fatal("the ended control client is still the one in use")
	}
}
