package tui

import (
	"os"
	"strings"
	"testing"
	"time"
)

// c copies the selected step's tool call with OSC 52 and says so; C its
// prompt; in the queue, the command an exec would run.
func TestCopySelection(t *testing.T) {
	d := newDriver(t, 120, 32)
	d.press("3")
	what, text, why := d.m.clipTarget(false)
	if why != "" || what != "step 4's tool call" || text != `run:{"cmd":"make release-dry-run"}` {
		t.Fatalf("copy in the timeline: %q %q %q", what, text, why)
	}
	cmd := d.m.copySelection(false)
	if cmd == nil {
		t.Fatal("copying made no command")
	}
	d.contains("copied step 4's tool call (34 bytes, OSC 52)")
	d.advance(6 * time.Second)
	d.lacks("copied step 4")

	if what, text, _ := d.m.clipTarget(true); what != "step 4's prompt" || !strings.Contains(text, "Goal: see the run.") {
		t.Fatalf("copy the prompt: %q %q", what, text)
	}
	d.press("6", "G")
	if what, text, _ := d.m.clipTarget(false); what != "approval 3's exec" || !strings.HasPrefix(text, "make release") {
		t.Fatalf("copy in the queue: %q %q", what, text)
	}
	d.press("5", "c")
	d.contains("nothing to copy: the drift pane has nothing to copy")
}

// o writes the selection to a private file and hands it to $PAGER; the
// file is gone once the pager exits.
func TestOpenWritesThePagerFile(t *testing.T) {
	d := newDriver(t, 120, 32)
	d.press("3")
	cmd := d.m.open(false, false)
	ready, ok := cmd().(openReadyMsg)
	if !ok || ready.err != nil {
		t.Fatalf("open: %#v", ready)
	}
	b, err := os.ReadFile(ready.path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(ready.path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the pager file is %v, want private", fi.Mode().Perm())
	}
	// The step as its pane shows it, the tool call's JSON indented.
	for _, want := range []string{"ran make release-dry-run (exit 0)", "── Tool call", "run {\n  \"cmd\": \"make release-dry-run\"\n}", "[ok] 12 artifacts"} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the pager file lacks %q:\n%s", want, b)
		}
	}
	if exec := d.m.onOpenReady(ready); exec == nil {
		t.Fatal("no pager command")
	}
	d.send(openDoneMsg{path: ready.path, what: ready.what})
	if _, err := os.Stat(ready.path); !os.IsNotExist(err) {
		t.Fatalf("the pager file outlived the pager: %v", err)
	}
	d.contains("closed step 4")

	// The whole run from the runs pane: its canonical trace.
	d.press("1")
	ready = d.m.open(false, false)().(openReadyMsg)
	b, _ = os.ReadFile(ready.path)
	os.Remove(ready.path)
	if ready.what != "run #4" || !strings.Contains(string(b), "release-dry-run") {
		t.Fatalf("open the run: %q\n%s", ready.what, b)
	}
}
