package ioharness_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// foreign writes rows the way io-harness does, through Python's sqlite3
// (internal/testkit/fixture/harness.py), or skips where there is no python3.
func foreign(t *testing.T, path string, calls ...fixture.Call) []int64 {
	t.Helper()
	ids, err := fixture.Foreign(path, calls...)
	if errors.Is(err, fixture.ErrNoPython) {
		testkit.Need(t, "python3", "the foreign writer (harness.py, through Python's sqlite3) writes this test's rows")
	}
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// A 0.66 store (the Go twin's schema, as io-harness's migrations leave it)
// whose newer tables a foreign party fills as io-harness's Store methods
// do: the live stream Broadcast writes (put_event), gate attempts, the
// mailbox, the fleet's queue, todos, process handles and their output,
// citations, server tools, folds and resumes. Reading them changes nothing.
func TestFactsForeign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root, _ := w.StartRun(ctx, "fan out", "/repo")
	child, _ := w.StartChildRun(ctx, "scout", "/repo", root, 1)
	w.Close()
	r, c := runNo(root), runNo(child)
	C := fixture.C
	foreign(t, path,
		C("put_event", "run_id", r, "step", 0, "depth", 0, "event", "started", "goal", "fan out", "provider", "anthropic"),
		C("put_event", "run_id", r, "step", 1, "depth", 0, "event", "tool_call", "name", "read_file", "target", "notes.txt"),
		C("put_event", "run_id", r, "step", 1, "depth", 0, "event", "step", "decision", "read notes.txt", "tool_call", "read_file:{}", "tokens", 120, "changed", false),
		C("put_event", "run_id", r, "step", 2, "depth", 0, "event", "retry", "kind", "RateLimited", "attempt", 1, "delay_ms", 2000),
		C("put_event", "run_id", c, "step", 1, "depth", 1, "event", "token", "text", "Let me look"),
		C("put_event", "run_id", c, "step", 1, "depth", 1, "event", "token", "text", " at the parser."),
		C("put_gate_attempt", "run_id", r, "step", 2, "phase", "review", "outcome", "errored", "detail", "HTTP 529"),
		C("put_gate_attempt", "run_id", r, "step", 2, "phase", "review", "outcome", "passed"),
		C("send_message", "from_run_id", c, "to_run_id", r, "from_name", "scout", "step", 1, "body", "found it"),
		C("send_message", "from_run_id", c, "to_run_id", r, "from_name", "scout", "step", 1, "body", "and another"),
		C("read_messages", "to_run_id", r),
		C("send_message", "from_run_id", c, "to_run_id", r, "from_name", "scout", "step", 2, "body", "one more"),
		C("enqueue_agent", "parent_run_id", r, "step", 2, "goal", "summarise chapter 7", "depth", 1),
		C("enqueue_agent", "parent_run_id", r, "step", 2, "goal", "summarise chapter 8", "depth", 1),
		C("enqueue_agent", "parent_run_id", r, "step", 2, "goal", "summarise chapter 7", "depth", 1), // a replay: ignored
		C("write_todos", "run_id", r, "items", [][2]string{{"read the notes", "done"}, {"fan out", "active"}, {"merge", "pending"}}),
		C("record_handle_started", "run_id", c, "step", 1, "handle", 1, "line", "npm run dev"),
		C("record_handle_output", "run_id", c, "step", 1, "handle", 1, "chunk", "listening on "),
		C("record_handle_output", "run_id", c, "step", 2, "handle", 1, "chunk", "3000\n"),
		C("record_handle_started", "run_id", c, "step", 1, "handle", 2, "line", "cargo test"),
		C("record_handle_ended", "run_id", c, "handle", 2, "state", "exited", "code", 0),
		C("record_handle_ended", "run_id", c, "handle", 2, "state", "killed", "reason", "run ended"), // first writer wins
		C("record_citations", "run_id", r, "step", 2, "citations", []map[string]any{{"url": "https://example.invalid/a", "title": "A"}}),
		C("record_server_tools", "run_id", r, "step", 2, "calls", []map[string]any{{"provider": "anthropic", "tool": "web_fetch", "error": "url_not_allowed"}}),
		C("put_summary", "run_id", r, "through_step", 2, "folded", 5, "text", "read the notes; fanned out", "est_tokens", 40),
		C("record_checkpoint_event", "run_id", r, "step", 2, "kind", "resume", "detail", "restarted after a crash"),
		C("record_sandbox_event", "run_id", r, "step", 2, "kind", "gate_phase_failed", "detail", "test-run"),
	)
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	f, err := s.RunFacts(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, fact := range []store.Fact{store.FactRunEvents, store.FactQueue, store.FactMessages, store.FactGateAttempts,
		store.FactFolds, store.FactProcesses, store.FactTodos, store.FactCitations, store.FactServerTools} {
		if !f.Recorded.Has(fact) {
			t.Errorf("a 0.66 store does not record %s", fact)
		}
	}
	if len(f.GateAttempts) != 2 || f.GateAttempts[0].Outcome != store.GateErrored || f.GateAttempts[0].Detail != "HTTP 529" ||
		f.GateAttempts[1].Outcome != store.GatePassed || f.GateAttempts[1].Phase != "review" {
		t.Errorf("gate attempts %+v", f.GateAttempts)
	}
	if len(f.GateFailures) != 1 || f.GateFailures[0] != (store.Tally{Key: "test-run", Count: 1}) || f.Resumes() != 1 {
		t.Errorf("gate failures %+v, resumes %d", f.GateFailures, f.Resumes())
	}
	if len(f.Messages) != 3 || !f.Messages[0].Read() || !f.Messages[1].Read() || f.Messages[2].Read() ||
		f.Messages[2].Body != "one more" || f.Messages[2].FromName != "scout" || f.Messages[2].FromID != child {
		t.Errorf("messages %+v", f.Messages)
	}
	if len(f.Queued) != 2 || f.Queued[0].Goal != "summarise chapter 7" || f.Queued[1].Depth != 1 {
		t.Errorf("queued %+v", f.Queued)
	}
	if len(f.Todos) != 3 || f.Todos[1].State != store.TodoActive || f.Todos[2].Text != "merge" {
		t.Errorf("todos %+v", f.Todos)
	}
	if f.Stream != 4 || f.LastEvent == nil || f.LastEvent.Kind != store.LiveRetry {
		t.Errorf("stream: %d events, last %+v", f.Stream, f.LastEvent)
	}
	if len(f.Folds) != 1 || f.Folds[0].Folded != 5 || f.Folds[0].Step != 2 {
		t.Errorf("folds %+v", f.Folds)
	}
	if len(f.Citations) != 1 || len(f.ServerTools) != 1 || f.ServerTools[0].Error != "url_not_allowed" {
		t.Errorf("citations %+v, server tools %+v", f.Citations, f.ServerTools)
	}
	cf, err := s.RunFacts(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Processes) != 2 || cf.Processes[0].State != store.ProcessRunning || cf.Processes[0].Output != "listening on 3000\n" ||
		cf.Processes[1].State != store.ProcessExited || cf.Processes[1].Code == nil || *cf.Processes[1].Code != 0 {
		t.Errorf("processes %+v", cf.Processes)
	}

	a, err := s.Activity(ctx, store.ActivityQuery{RunIDs: []string{root, child}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Unread[root]) != 1 || len(a.Queued[root]) != 2 || len(a.Todos[root]) != 3 ||
		len(a.Processes[child]) != 1 || a.Processes[child][0].Line != "npm run dev" {
		t.Errorf("activity %+v", a)
	}
	var got []string
	for _, e := range a.Events {
		got = append(got, e.RunID+" "+string(e.Kind)+" "+e.Name+" "+e.Text)
	}
	want := []string{
		root + " started started anthropic",
		root + " tool tool_call read_file notes.txt",
		root + " step step read notes.txt",
		root + " retry retry RateLimited, attempt 1",
		child + " model token ",
		child + " model token ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a.Events[3].Wait.Milliseconds() != 2000 || a.Events[5].Size != len(" at the parser.") {
		t.Errorf("retry wait %v, chunk size %d", a.Events[3].Wait, a.Events[5].Size)
	}
	// A tree of more agents than an id list names (a 100 k-agent tree)
	// reads every row and keeps its own, and the stream's end in one read
	// instead of a seek per agent: the same activity as the two alone.
	many := []string{root, child}
	for i := 0; len(many) <= 1500; i++ {
		many = append(many, strconv.Itoa(900_000+i))
	}
	wide, err := s.Activity(ctx, store.ActivityQuery{RunIDs: many})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wide, a) {
		t.Errorf("the activity of a tree of %d agents:\n%+v\nwant (its two agents alone)\n%+v", len(many), wide, a)
	}
	// The newest events per run after a cursor: the tail only.
	cursor := a.Events[1].ID
	a, err = s.Activity(ctx, store.ActivityQuery{RunIDs: []string{root, child}, After: cursor, PerRun: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Events) != 2 || a.Events[0].Kind != store.LiveRetry || a.Events[1].RunID != child {
		t.Errorf("the tail after a cursor: %+v", a.Events)
	}
	if wide, err = s.Activity(ctx, store.ActivityQuery{RunIDs: many, After: cursor, PerRun: 1}); err != nil || !reflect.DeepEqual(wide.Events, a.Events) {
		t.Errorf("the tail of a tree of %d agents after a cursor: %+v (%v), want %+v", len(many), wide.Events, err, a.Events)
	}
	last, err := s.LastWrite(ctx)
	if err != nil || last.IsZero() {
		t.Errorf("last write %v, %v", last, err)
	}
}

func runNo(id string) int64 {
	var n int64
	for _, c := range id {
		n = n*10 + int64(c-'0')
	}
	return n
}

// A store nothing writes: the first refresh after Head finds nothing. (The
// cursor used to take each open run's newest turn as still waiting for its
// provider count even when the count had landed, so the first refresh told
// a quiet store as written.)
func TestQuietStoreHasNoChanges(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := s.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Empty() {
		t.Errorf("a quiet store changed: %d runs, %d steps, %d samples, %d requests", len(ch.Runs), len(ch.Steps), len(ch.Context), len(ch.Requests))
	}
	// The store's own last write: the newest lease renewal the fixture pins.
	if last, err := s.LastWrite(ctx); err != nil || !last.Equal(fixture.Base.Add(19*time.Minute)) {
		t.Errorf("last write %v (%v), want %v", last, err, fixture.Base.Add(19*time.Minute))
	}
}
