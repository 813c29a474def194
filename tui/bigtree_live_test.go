package tui

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// In a tree of 1 200 agents (more than the store names in SQL), an agent
// that started a long build and has said nothing since, while the others
// streamed 12 000 chunks after it, is in the live strip with what it runs;
// a refresh after 10 000 more chunks shows the agent that spoke once among
// them. python3's sqlite3 writes the store as io-harness does (put_event).
func TestLiveStripOfABigTreeMissesNoQuietAgent(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	write := func(fresh bool, events string) {
		t.Helper()
		script := `
import json, sqlite3, sys
path, schema, fresh, events = sys.argv[1], sys.argv[2], sys.argv[3] == "1", json.loads(sys.argv[4])
db = sqlite3.connect(path)
if fresh:
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(open(schema).read())
    db.execute("INSERT INTO runs (id, goal, file, depth, status) VALUES (1, 'coordinate', '/w', 0, 'running')")
    db.executemany("INSERT INTO runs (id, goal, file, parent_run_id, depth, status) VALUES (?, ?, '/w', 1, 1, 'running')",
        ((i, "worker %d" % i) for i in range(2, 1201)))
def rows():
    for lo, hi, count, event, fields in events:
        for k in range(count):
            run = lo + k % (hi - lo + 1)
            obj = {"run_id": run, "step": 1, "depth": 1, "event": event}
            obj.update(fields)
            yield (run, 1, 1, event, json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
db.executemany("INSERT INTO run_events (run_id, step, depth, kind, json) VALUES (?, ?, ?, ?, ?)", rows())
db.commit()
`
		f := "0"
		if fresh {
			f = "1"
		}
		if out, err := exec.Command("python3", "-c", script, path, filepath.Join("..", "store", "ioharness", "internal", "schema", "schema.sql"), f, events).CombinedOutput(); err != nil {
			t.Fatalf("python3: %v\n%s", err, out)
		}
	}
	write(true, `[[5, 5, 1, "tool_call", {"name": "run", "target": "cargo build --release"}],
		[10, 60, 12000, "token", {"text": "chunk "}]]`)
	d := openDriver(t, path, 200, 60)
	d.press("enter") // the tree of the newest run
	// The strip is one line, the newest doings first: select the quiet
	// agent to put it first.
	selectAgent := func(id string) {
		t.Helper()
		d.press("2")
		for i := 0; i < 10 && d.m.tree.Selected() != id; i++ {
			d.press("j")
		}
		if d.m.tree.Selected() != id {
			t.Fatalf("selected %s, want %s", d.m.tree.Selected(), id)
		}
	}
	selectAgent("5")
	d.contains(" now  #5 ⚙ running run cargo build --release")
	write(false, `[[7, 7, 1, "tool_call", {"name": "read", "target": "Cargo.lock"}],
		[10, 60, 10000, "token", {"text": "chunk "}]]`)
	d.refresh()
	d.contains(" now  #5 ⚙ running run cargo build --release")
	selectAgent("6")
	if s := d.screen(); strings.Contains(s, "#6 ⚙") || strings.Contains(s, " now  #6") {
		t.Fatal("an agent that said nothing shows a doing")
	}
	selectAgent("7")
	d.contains(" now  #7 ⚙ running read Cargo.lock")
}
