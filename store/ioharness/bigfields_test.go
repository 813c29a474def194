package ioharness

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// bigFieldStore has python3's sqlite3 (a foreign writer) make a store of
// this package's schema whose run 1 has a small step, a step whose result,
// prompt and tool call are larger than anything SQL is handed
// (timelineSQLBytes, MaxDetailBytes) and a huge turn text, all of hostile
// multi-byte text; and python3 (a foreign reader) write the canonical trace
// as io-harness's Store::canonical_trace prints it.
func bigFieldStore(t *testing.T) (path, trace, dir string) {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	dir = t.TempDir()
	path = filepath.Join(dir, "runs.sqlite3")
	script := `
import sqlite3, sys
path, schema = sys.argv[1], open(sys.argv[2]).read()
unit = "\n\n  \r\nhé ✂ 日本 \x1b[2J 🇫🇷 \u202e|"
def text(n, first):
    v = first + unit * (n // len(unit.encode()) + 1)
    return v.encode()[:n].decode("utf-8", "ignore")
db = sqlite3.connect(path)
db.execute("PRAGMA journal_mode=WAL")
db.executescript(schema)
db.execute("INSERT INTO runs (id, goal, file) VALUES (1, 'big', 'f.rs')")
db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, 1, 'read', 'small result', 'p', '{}', 5)")
db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, 2, 'edit', ?, ?, ?, 7)",
    (text(3 << 20, "\n \n"), text(300 << 10, "P"), text(300 << 10, '{"path":"')))
db.execute("INSERT INTO step_turns (run_id, step, text, calls) VALUES (1, 2, ?, '[]')", (text(400 << 10, "T"),))
db.execute("INSERT INTO context_events (run_id, step, kind, detail, est_tokens) VALUES (1, 2, 'assembled', 'ctx', 10)")
db.commit()
d = sys.argv[3]
for name, q in [("result", "SELECT result FROM steps WHERE step = 2"), ("prompt", "SELECT prompt FROM steps WHERE step = 2"),
        ("tool call", "SELECT tool_call FROM steps WHERE step = 2"), ("turn", "SELECT text FROM step_turns WHERE step = 2")]:
    open(d + "/" + name, "wb").write(db.execute(q).fetchone()[0].encode())
out = []
for step, tokens, d, tc, p, r in db.execute("SELECT step, tokens, decision, tool_call, prompt, result FROM steps WHERE run_id = 1 ORDER BY step, id"):
    out.append("step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n" % (step, tokens, d, tc, p, r))
for step, kind, detail in db.execute("SELECT step, kind, detail FROM context_events WHERE run_id = 1 ORDER BY id"):
    out.append("context %d | %s | %s\n" % (step, kind, detail or ""))
sys.stdout.buffer.write("".join(out).encode("utf-8", "surrogatepass"))
`
	out, err := exec.Command("python3", "-c", script, path, filepath.Join("internal", "schema", "schema.sql"), dir).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return path, string(out), dir
}

// Fields too big to hand to SQL are read from their heads: the timeline's
// summary and the detail's text are what they would be cut in SQL, the
// fields are named cut, and the trace is byte for byte the whole.
func TestBigFieldsReadFromTheirHeads(t *testing.T) {
	path, want, dir := bigFieldStore(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	steps, err := s.Steps(ctx, "1")
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps: %v, %v", steps, err)
	}
	if got := steps[1].ResultHead; got != "hé ✂ 日本 \x1b[2J 🇫🇷 \u202e|" {
		t.Errorf("result head %q", got)
	}
	if got := steps[1].ToolCall; len(got) > toolCallSummaryBytes || !strings.HasPrefix(got, `{"path":"`) {
		t.Errorf("tool call summary %d bytes: %.40q", len(got), got)
	}
	d, err := s.StepDetail(ctx, "1", steps[1].RowID)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"result": d.Result, "prompt": d.Prompt, "tool call": d.ToolCallFull, "turn": d.TurnText} {
		if !slices.Contains(d.Truncated, name) {
			t.Errorf("%s not named cut: %v", name, d.Truncated)
		}
		if len(v) > store.MaxDetailBytes || len(v) < store.MaxDetailBytes-4 || !strings.Contains(want, v) && name != "turn" {
			t.Errorf("%s: %d bytes, not the field's head", name, len(v))
		}
		if !utf8Valid(v) {
			t.Errorf("%s: a character cut in two", name)
		}
		whole, _ := os.ReadFile(filepath.Join(dir, name))
		if d.FieldBytes[name] != int64(len(whole)) {
			t.Errorf("%s: FieldBytes %d, the field is %d bytes", name, d.FieldBytes[name], len(whole))
		}
		var b bytes.Buffer
		if err := s.WriteStepField(ctx, "1", steps[1].RowID, name, &b); err != nil || !bytes.Equal(b.Bytes(), whole) {
			t.Errorf("WriteStepField(%s): %d bytes of %d, %v", name, b.Len(), len(whole), err)
		}
	}
	if err := s.WriteStepField(ctx, "1", steps[1].RowID, "decision", io.Discard); err == nil {
		t.Error("a field it cannot write was written")
	}
	if err := s.WriteStepField(ctx, "1", 999, "result", io.Discard); !isKind(err, store.ErrNoSuchRun) {
		t.Errorf("a missing row: %v", err)
	}
	small, err := s.StepDetail(ctx, "1", steps[0].RowID)
	if err != nil || small.Result != "small result" || len(small.Truncated) != 0 {
		t.Errorf("small step: %q %v %v", small.Result, small.Truncated, err)
	}
	ds, err := s.StepDetails(ctx, "1")
	if err != nil || len(ds) != 2 || ds[1].Result != d.Result || !slices.Contains(ds[1].Truncated, "result") {
		t.Errorf("StepDetails disagrees with StepDetail: %v", err)
	}
	got, err := s.CanonicalTrace(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("trace: %d bytes, want %d (python's)", len(got), len(want))
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }
