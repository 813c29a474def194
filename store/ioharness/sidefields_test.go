package ioharness

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// sideBytes is how long each huge side value is: past the length the
// reading connection is limited to in TestSideFieldsReadInPieces.
const sideBytes = 3 << 20

// sideFieldStore has python3's sqlite3 (a foreign writer) fill, for step 2
// of run 1, every io-harness column outside steps that a harness fills with
// a tool's output or a model's text and vigil shows, with sideBytes of
// hostile multi-byte text each:
//
//   - ledger_observations.text (Store::record_observations, src/state/trace.rs)
//   - edits.hunk (Store::record_edit, src/state/trace.rs)
//   - context_events.detail, an 'assembled' row and a 'question_asked' one
//     (Store::record_context_event, src/state/trace.rs; ContextEvent::question_asked
//     carries the question's text)
//
// It writes each whole value to dir, named for its field, and the trace
// as Store::canonical_trace prints it.
func sideFieldStore(t *testing.T) (path, trace, dir string) {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	dir = t.TempDir()
	path = filepath.Join(dir, "runs.sqlite3")
	script := `
import sqlite3, sys
path, schema, n, d = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4]
unit = "\n\n  \r\nhé ✂ 日本 \x1b[2J 🇫🇷 \u202e|"
def text(n, first):
    v = first + unit * (n // len(unit.encode()) + 1)
    return v.encode()[:n].decode("utf-8", "ignore")
db = sqlite3.connect(path)
db.execute("PRAGMA journal_mode=WAL")
db.executescript(schema)
db.execute("INSERT INTO runs (id, goal, file) VALUES (1, 'big', 'f.rs')")
db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, 1, 'read', 'small', 'p', '{}', 5)")
db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, 2, 'edit', 'ok', 'p', '{}', 7)")
vals = {"observation": text(n, "O"), "edit": text(n, "@@ -1 +1 @@\n"), "assembled": text(n, "carried="), "question": text(n, "Q: ")}
db.execute("INSERT INTO ledger_observations (run_id, step, kind, target, text) VALUES (1, 2, 'read', 'a.rs', 'small one')")
db.execute("INSERT INTO ledger_observations (run_id, step, kind, target, text) VALUES (1, 2, 'read', 'b.rs', ?)", (vals["observation"],))
db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed, hunk) VALUES (1, 2, 'edit_file', 'b.rs', 1, 1, ?)", (vals["edit"],))
db.execute("INSERT INTO context_events (run_id, step, kind, detail, est_tokens) VALUES (1, 2, 'assembled', ?, 10)", (vals["assembled"],))
db.execute("INSERT INTO context_events (run_id, step, kind, detail) VALUES (1, 2, 'question_asked', ?)", (vals["question"],))
db.commit()
for k, v in vals.items():
    open(d + "/" + k, "wb").write(v.encode())
out = []
for step, tokens, dec, tc, p, r in db.execute("SELECT step, tokens, decision, tool_call, prompt, result FROM steps WHERE run_id = 1 ORDER BY step, id"):
    out.append("step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n" % (step, tokens, dec, tc, p, r))
for step, kind, detail in db.execute("SELECT step, kind, detail FROM context_events WHERE run_id = 1 ORDER BY id"):
    out.append("context %d | %s | %s\n" % (step, kind, detail or ""))
sys.stdout.buffer.write("".join(out).encode())
`
	out, err := exec.Command("python3", "-c", script, path, filepath.Join("internal", "schema", "schema.sql"), strconv.Itoa(sideBytes), dir).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return path, string(out), dir
}

// limitReads has every read of s go through one connection on which SQLite
// refuses to load any value longer than n bytes (SQLITE_LIMIT_LENGTH: a
// query that loads one fails "string or blob too big"). Reading a value's
// length, or reading it in pieces through the blob calls, loads nothing.
func limitReads(t *testing.T, s *Store, n int) {
	t.Helper()
	s.read.SetMaxOpenConns(1)
	c, err := s.read.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const sqliteLimitLength = 0
	if _, err := sqlite.Limit(c, sqliteLimitLength, n); err != nil {
		t.Fatal(err)
	}
	var x sql.NullString
	err = c.QueryRowContext(context.Background(), "SELECT text FROM ledger_observations WHERE length(text) > 100").Scan(&x)
	if err == nil || !strings.Contains(err.Error(), "too big") {
		t.Fatalf("the limit does not hold: %v", err)
	}
}

// Every huge side value is read by its head, in pieces: on a connection
// that cannot load any of them, the step's detail, the drift samples, the
// run's context events and the trace all read, each cut field is named
// with its whole size, and the pager's writer and the trace give it whole,
// byte for byte what python3 wrote.
func TestSideFieldsReadInPieces(t *testing.T) {
	path, want, dir := sideFieldStore(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	limitReads(t, s, 1<<20)
	ctx := context.Background()
	whole := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	d, err := s.StepDetail(ctx, "1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Observations) != 2 || d.Observations[0].Text != "small one" || len(d.Edits) != 1 {
		t.Fatalf("observations %d, edits %d", len(d.Observations), len(d.Edits))
	}
	small := store.ObservationField(d.Observations[0].RowID)
	if slices.Contains(d.Truncated, small) {
		t.Errorf("the small observation is named cut: %v", d.Truncated)
	}
	for _, f := range []struct{ name, field, head string }{
		{"observation", store.ObservationField(d.Observations[1].RowID), d.Observations[1].Text},
		{"edit", store.EditField(d.Edits[0].RowID), d.Edits[0].Hunk},
	} {
		w := whole(f.name)
		if !slices.Contains(d.Truncated, f.field) || d.FieldBytes[f.field] != int64(len(w)) {
			t.Errorf("%s: cut %v, FieldBytes %d, want %d", f.field, d.Truncated, d.FieldBytes[f.field], len(w))
		}
		if len(f.head) > store.MaxDetailBytes || len(f.head) < store.MaxDetailBytes-4 || !bytes.HasPrefix(w, []byte(f.head)) || !utf8Valid(f.head) {
			t.Errorf("%s: a head of %d bytes that is not the value's", f.name, len(f.head))
		}
		var b bytes.Buffer
		if err := s.WriteStepField(ctx, "1", 2, f.field, &b); err != nil || !bytes.Equal(b.Bytes(), w) {
			t.Errorf("WriteStepField(%s): %d bytes of %d, %v", f.field, b.Len(), len(w), err)
		}
	}
	// Another step's row, or a row of no table, is not written.
	if err := s.WriteStepField(ctx, "1", 1, store.EditField(d.Edits[0].RowID), &bytes.Buffer{}); err == nil {
		t.Error("step 1 wrote step 2's edit")
	}
	if err := s.WriteStepField(ctx, "1", 2, "edit x", &bytes.Buffer{}); err == nil {
		t.Error("a field with no row was written")
	}
	ds, err := s.StepDetails(ctx, "1")
	if err != nil || len(ds) != 2 || ds[1].FieldBytes[store.EditField(d.Edits[0].RowID)] != int64(len(whole("edit"))) {
		t.Errorf("StepDetails: %d details, %v: %v", len(ds), ds[len(ds)-1].FieldBytes, err)
	}
	samples, err := s.ContextSamples(ctx, "1")
	if err != nil || len(samples) != 1 {
		t.Fatalf("samples %v, %v", len(samples), err)
	}
	evs, err := s.contextEvents(ctx, 1, allSteps)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", len(evs), err)
	}
	for _, c := range []struct {
		name, head string
		size       int64
	}{{"assembled", samples[0].Detail, samples[0].DetailBytes}, {"question", evs[0].Detail, evs[0].DetailBytes}} {
		w := whole(c.name)
		if c.size != int64(len(w)) || len(c.head) > store.MaxEventDetailBytes || len(c.head) < store.MaxEventDetailBytes-4 || !bytes.HasPrefix(w, []byte(c.head)) {
			t.Errorf("%s: a head of %d bytes, size %d, want the head of %d", c.name, len(c.head), c.size, len(w))
		}
	}
	var b bytes.Buffer
	if err := s.WriteCanonicalTrace(ctx, "1", &b); err != nil || b.String() != want {
		t.Errorf("trace: %d bytes, want python's %d: %v", b.Len(), len(want), err)
	}
}

// A process's output chunk (what one poll read, Store::record_handle_output
// in src/state/agents.rs) past the reading connection's length limit: its
// end is read in pieces, and it ends the process's output as python3 wrote it.
func TestHandleOutputTailReadInPieces(t *testing.T) {
	path, _, _ := sideFieldStore(t)
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO process_handles (run_id, handle, step, line, state) VALUES (1, 1, 2, 'make', 'running')")
big = "é" + ("build line ✂ 日本\n" * ((4 << 20) // 20))
db.execute("INSERT INTO handle_output (run_id, handle, step, chunk) VALUES (1, 1, 2, 'first poll\n')")
db.execute("INSERT INTO handle_output (run_id, handle, step, chunk) VALUES (1, 1, 2, ?)", (big,))
db.execute("INSERT INTO handle_output (run_id, handle, step, chunk) VALUES (1, 1, 2, 'done\n')")
db.commit()
open(sys.argv[2], "wb").write((big + "done\n").encode())
`, filepath.Join(filepath.Dir(path), "output"))
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	limitReads(t, s, 1<<20)
	procs, err := s.processes(context.Background(), []int64{1}, false)
	if err != nil || len(procs["1"]) != 1 {
		t.Fatalf("processes: %v, %v", procs, err)
	}
	whole, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "output"))
	got := procs["1"][0].Output
	if len(got) > store.MaxProcessOutput || len(got) < store.MaxProcessOutput-4 || !bytes.HasSuffix(whole, []byte(got)) || !utf8Valid(got) {
		t.Errorf("output: %d bytes, not the end of the %d python wrote", len(got), len(whole))
	}
}

// A write awaiting approval whose content (Store::put_pending,
// src/state/approvals.rs: the whole file the write would leave) is past
// the reading connection's length limit: the queue and the change feed
// read its head in pieces, with its whole size.
func TestApprovalContentReadInPieces(t *testing.T) {
	path, _, _ := sideFieldStore(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	limitReads(t, s, 1<<20)
	ctx := context.Background()
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
big = "replicas: 4\n" + ("é✂ line\n" * ((3 << 20) // 12))
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (1, 2, 'write', 'big.yaml', ?)", (big,))
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (1, 2, 'write', 'small.yaml', 'x: 1')")
db.commit()
`)
	reqs, err := s.Requests(ctx, true)
	if err != nil || len(reqs) != 2 {
		t.Fatalf("requests: %d, %v", len(reqs), err)
	}
	ch, _, err := s.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range [][]store.Request{reqs, ch.Requests} {
		var big, small *store.Request
		for i := range rs {
			switch rs[i].Target {
			case "big.yaml":
				big = &rs[i]
			case "small.yaml":
				small = &rs[i]
			}
		}
		if big == nil || small == nil || small.Content != "x: 1" || !small.HasContent {
			t.Fatalf("requests %+v", rs)
		}
		if !big.HasContent || !strings.HasPrefix(big.Content, "replicas: 4\n") || len(big.Content) > store.MaxContentBytes ||
			len(big.Content) < store.MaxContentBytes-4 || big.ContentBytes < 2<<20 || !utf8Valid(big.Content) {
			t.Errorf("big content: %d bytes of %d", len(big.Content), big.ContentBytes)
		}
	}
}

// A summary (Store::put_summary, src/state/memory.rs), a message between
// agents (Store::send_message, src/state/agents.rs) and a stream event
// (Store::put_event, src/state/trace.rs) past the reading connection's
// length limit: the run's facts and activity read, the text ones by their
// heads, the event by its kind alone.
func TestRunFactsTextsReadInPieces(t *testing.T) {
	path, _, _ := sideFieldStore(t)
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
big = lambda first: first + ("é✂ words\n" * ((3 << 20) // 12))
db.execute("INSERT INTO summaries (run_id, through_step, folded, text, est_tokens) VALUES (1, 2, 2, ?, 10)", (big("SUMMARY "),))
db.execute("INSERT INTO agent_messages (from_run_id, to_run_id, from_name, step, body) VALUES (1, 1, 'self', 2, ?)", (big("MSG "),))
db.execute("INSERT INTO run_events (run_id, step, depth, kind, json) VALUES (1, 2, 0, 'tool_result', ?)", ('{"event":"tool_result","output":"' + "x" * (3 << 20) + '"}',))
db.commit()
`)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	limitReads(t, s, 1<<20)
	ctx := context.Background()
	var f store.RunFacts
	if err := s.factFolds(ctx, 1, &f); err != nil || len(f.Folds) != 1 {
		t.Fatalf("folds: %v, %v", f.Folds, err)
	}
	msgs, err := s.messages(ctx, []int64{1}, false)
	if err != nil || len(msgs["1"]) != 1 {
		t.Fatalf("messages: %v, %v", msgs, err)
	}
	for name, v := range map[string]string{"SUMMARY ": f.Folds[0].Text, "MSG ": msgs["1"][0].Body} {
		if !strings.HasPrefix(v, name) || len(v) > store.MaxDetailBytes || len(v) < store.MaxDetailBytes-4 || !utf8Valid(v) {
			t.Errorf("%s: a head of %d bytes", name, len(v))
		}
	}
	evs, err := s.runEvents(ctx, 1, 0, 1<<40, 10)
	if err != nil || len(evs) != 1 || evs[0].Name != "tool_result" {
		t.Errorf("events: %v, %v", evs, err)
	}
}
