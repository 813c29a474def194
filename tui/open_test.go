package tui

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
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

// A result far larger than the step pane reads: the pane shows its head
// and says how much more there is and which key opens it whole; o writes
// it whole to the pager's file, made safe, read from the store a piece at
// a time.
func TestOpenWritesAHugeFieldWhole(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// python3's sqlite3, another writer, makes step 4's result 3 MB of
	// hostile text.
	out, err := exec.Command("python3", "-c", `
import sqlite3, sys
unit = "line é 日本 \x1b]0;pwned\x07 🇫🇷\r\n"
v = (unit * (3 * 2**20 // len(unit.encode()) + 1)) + "THE END"
db = sqlite3.connect(sys.argv[1])
n = db.execute("UPDATE steps SET result = ? WHERE tool_call LIKE '%release-dry-run%'", (v,)).rowcount
db.commit()
sys.stdout.write(v if n == 1 else "")`, path).Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("python3: %v (%d bytes)", err, len(out))
	}
	whole := sanitize.Text(string(out))
	d := openDriver(t, path, 120, 32)
	d.press("3", "4")
	d.press("/")
	d.typeText("opens it whole")
	d.press("enter")
	d.contains("… 2.8 MB more — o opens it whole in the pager")

	ready, ok := d.m.open(false, false)().(openReadyMsg)
	if !ok || ready.err != nil {
		t.Fatalf("open: %#v", ready)
	}
	defer os.Remove(ready.path)
	b, err := os.ReadFile(ready.path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.Contains(got, "── Result") || !strings.Contains(got, whole+"\n") || strings.Contains(got, "opens it whole") {
		t.Fatalf("the pager file (%d bytes) lacks the whole result (%d bytes), or keeps the cut", len(got), len(whole))
	}
	if !sanitize.Safe(got) {
		t.Fatal("the pager file holds what a terminal acts on")
	}
}

// A ledger observation and an edit hunk far larger than the step pane
// reads (Store::record_observations, Store::record_edit in io-harness's
// src/state/trace.rs): the pane shows each one's head and says how much
// more there is; o writes both whole, made safe, read a piece at a time.
func TestOpenWritesHugeSideFieldsWhole(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", "-c", `
import sqlite3, sys
unit = "line é 日本 \x1b]0;pwned\x07 🇫🇷\r\n"
big = lambda first, last: first + (unit * (3 * 2**20 // len(unit.encode()) + 1)) + last
obs, hunk = big("OBSERVED ", "OBS END"), big("@@ -1 +1 @@\n+", "HUNK END")
db = sqlite3.connect(sys.argv[1])
run, step = db.execute("SELECT run_id, step FROM steps WHERE tool_call LIKE '%release-dry-run%'").fetchone()
db.execute("INSERT INTO ledger_observations (run_id, step, kind, target, text) VALUES (?, ?, 'exec', 'make', ?)", (run, step, obs))
db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed, hunk) VALUES (?, ?, 'edit_file', 'big.txt', 1, 0, ?)", (run, step, hunk))
db.commit()
sys.stdout.write(obs + "\0" + hunk)`, path).Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("python3: %v (%d bytes)", err, len(out))
	}
	obs, hunk, _ := strings.Cut(string(out), "\x00")
	d := openDriver(t, path, 120, 32)
	d.press("3", "4")
	d.press("/")
	d.typeText("OBSERVED")
	d.press("enter")
	d.contains("OBSERVED line é")
	ready, ok := d.m.open(false, false)().(openReadyMsg)
	if !ok || ready.err != nil {
		t.Fatalf("open: %#v", ready)
	}
	defer os.Remove(ready.path)
	b, err := os.ReadFile(ready.path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for name, v := range map[string]string{"observation": obs, "hunk": hunk} {
		if !strings.Contains(got, sanitize.Text(v)+"\n") {
			t.Errorf("the pager file (%d bytes) lacks the whole %s (%d bytes)", len(got), name, len(v))
		}
	}
	if strings.Contains(got, "opens it whole") || !sanitize.Safe(got) {
		t.Error("the pager file keeps a cut, or holds what a terminal acts on")
	}
}
