package ioharness

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A writer and a separate read-only reader of the same file, as a harness
// and vigil are.
func writerReader(t *testing.T) (w *harness.Store, r *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return w, r
}

// changes reads what came after *c and moves *c on to the next cursor.
func changes(t *testing.T, r *Store, c *store.Cursor) *store.Changes {
	t.Helper()
	ch, next, err := r.Changes(context.Background(), *c)
	if err != nil {
		t.Fatal(err)
	}
	*c = next
	return ch
}

func TestChangesSeesNewAndChangedRows(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	old := must[string](t)(w.StartRun(ctx, "before the cursor", "/w"))
	must[int64](t)(w.AcquireLease(ctx, old, time.Hour))
	oldReq := must[string](t)(w.PutPending(ctx, old, 1, "write", "a", ptr("A")))
	c := must[store.Cursor](t)(r.Head(ctx))
	if ch := changes(t, r, &c); !ch.Empty() {
		t.Fatalf("changes right after Head: %+v", ch)
	}

	run := must[string](t)(w.StartRun(ctx, "after", "/w"))
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read a", Result: "r", Tokens: 10})
	w.RecordContextEvent(ctx, run, 1, "assembled", "", ptr[int64](5))
	w.RecordContextEvent(ctx, run, 1, "memory_write", "k", nil)
	qid := must[string](t)(w.PutQuestion(ctx, run, 1, "which?", "", nil))
	w.RecordAgentEvent(ctx, store.AgentEvent{RunID: run, Step: 1, Kind: "budget_draw", Tokens: ptr[int64](10), Remaining: ptr[int64](90)})

	ch := changes(t, r, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != run || len(ch.Steps) != 1 || ch.Steps[0].Decision != "read a" ||
		len(ch.Context) != 1 || ch.Context[0].Reported != nil || len(ch.Requests) != 1 || ch.Requests[0].ID != qid ||
		len(ch.AgentEvents) != 1 || ch.LeasesChanged {
		t.Fatalf("changes = %+v", ch)
	}
	if ch := changes(t, r, &c); !ch.Empty() {
		t.Fatalf("second call repeated rows: %+v", ch)
	}

	// Rows that change in place: a decision made elsewhere, a provider count
	// landing on a turn, a run finishing, a lease renewed.
	w.ResolvePending(ctx, oldReq, "deny")
	w.RecordContextReported(ctx, run, 1, 900)
	w.FinishRun(ctx, run, "success")
	time.Sleep(5 * time.Millisecond) // renewed_at has millisecond precision
	w.RenewLease(ctx, old)
	ch = changes(t, r, &c)
	if len(ch.Requests) != 1 || ch.Requests[0].ID != oldReq || !ch.Requests[0].Resolved || ch.Requests[0].Decision != "deny" {
		t.Errorf("decision made elsewhere not seen: %+v", ch.Requests)
	}
	if len(ch.Context) != 1 || ch.Context[0].Reported == nil || *ch.Context[0].Reported != 900 {
		t.Errorf("provider count not seen: %+v", ch.Context)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].Outcome != "success" || ch.Runs[0].Summary == nil {
		t.Errorf("finish not seen: %+v", ch.Runs)
	}
	if !ch.LeasesChanged || ch.Leases[old].Owner != w.Owner() {
		t.Errorf("lease renewal not seen: %+v", ch.Leases)
	}
	if ch := changes(t, r, &c); !ch.Empty() {
		t.Fatalf("in-place changes repeated: %+v", ch)
	}
}

func TestChangesPagesAndResets(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "burst", "/w"))
	c := must[store.Cursor](t)(r.Head(ctx))
	for i := 1; i <= sqlitex.ChangesPage+500; i++ {
		w.RecordStepRow(ctx, run, harness.StepRecord{Step: i, Decision: "d", Result: "r"})
	}
	ch := changes(t, r, &c)
	if len(ch.Steps) != sqlitex.ChangesPage || !ch.More {
		t.Fatalf("first page: %d steps, More %v", len(ch.Steps), ch.More)
	}
	ch = changes(t, r, &c)
	if len(ch.Steps) != 500 || ch.More || ch.Steps[499].Number != sqlitex.ChangesPage+500 {
		t.Fatalf("second page: %d steps, More %v", len(ch.Steps), ch.More)
	}
	c.(*SQLCursor).marks["steps"] += 1 << 20 // as if the store at the path were a different, shorter one
	if ch := changes(t, r, &c); !ch.Reset {
		t.Error("a store whose ids went backwards was not reported as reset")
	}
}

// Changes leaves the cursor it is given alone: reading twice from one
// cursor gives the same rows, and the cursor it returns moves on.
func TestChangesDoesNotMoveTheCursorItIsGiven(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	c := must[store.Cursor](t)(r.Head(ctx))
	run := must[string](t)(w.StartRun(ctx, "held cursor", "/w"))
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read a", Result: "r"})
	must[string](t)(w.PutQuestion(ctx, run, 1, "which?", "", nil))
	first, next, err := r.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := r.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Steps) != 1 || len(again.Steps) != 1 || len(first.Requests) != 1 || len(again.Requests) != 1 ||
		len(first.Runs) != 1 || len(again.Runs) != 1 {
		t.Fatalf("first %+v, again from the same cursor %+v", first, again)
	}
	if ch, _, _ := r.Changes(ctx, next); !ch.Empty() {
		t.Fatalf("from the returned cursor: %+v", ch)
	}
	if c.(*SQLCursor).Mark("steps") != 0 || next.(*SQLCursor).Mark("steps") == 0 {
		t.Errorf("marks: given %d, returned %d", c.(*SQLCursor).Mark("steps"), next.(*SQLCursor).Mark("steps"))
	}
}

// io-harness's retry, escalation and compaction rows carry no column that
// says what they are, only the decision text io-harness writes for them:
// the adapter reads that text, and the timeline folds by the kind it set.
func TestStepKindsFromIOHarnessRows(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "kinds", "/w"))
	c := must[store.Cursor](t)(r.Head(ctx))
	must[struct{}](t)(struct{}{}, w.RecordRetry(ctx, run, 1, 1, "Timeout", 500*time.Millisecond, "timed out"))
	must[struct{}](t)(struct{}{}, w.RecordStepRow(ctx, run, harness.StepRecord{Step: 1, Decision: "escalated after 2 failures to claude-opus"}))
	must[struct{}](t)(struct{}{}, w.RecordStepRow(ctx, run, harness.StepRecord{Step: 1, Decision: "compacting after 180000 tokens"}))
	must[struct{}](t)(struct{}{}, w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "retry the build later", Result: "ok"}))
	ch := changes(t, r, &c)
	want := []store.StepKind{store.StepRetry, store.StepEscalation, store.StepCompaction, store.StepTurn}
	if len(ch.Steps) != len(want) {
		t.Fatalf("%d rows, want %d", len(ch.Steps), len(want))
	}
	for i, k := range want {
		if ch.Steps[i].Kind != k {
			t.Errorf("row %d (%q) is %v, want %v", i, ch.Steps[i].Decision, ch.Steps[i].Kind, k)
		}
	}
	steps := must[[]store.Step](t)(r.Steps(ctx, run))
	if len(steps) != 1 || steps[0].Kind != store.StepTurn || steps[0].Decision != "retry the build later" || len(steps[0].Retries) != 3 ||
		steps[0].Retries[1].Kind != store.StepEscalation {
		t.Fatalf("steps = %+v", steps)
	}
	d := must[store.StepDetail](t)(r.StepDetail(ctx, run, ch.Steps[0].RowID))
	if d.Kind != store.StepRetry {
		t.Errorf("detail of the retry row: kind %v", d.Kind)
	}
}

// One cursor read from several goroutines at once (run with -race): each
// gets the same changes, and none changes what the others read.
func TestChangesFromOneCursorConcurrently(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	c := must[store.Cursor](t)(r.Head(ctx))
	run := must[string](t)(w.StartRun(ctx, "shared cursor", "/w"))
	for i := 1; i <= 5; i++ {
		w.CheckpointStep(ctx, run, harness.StepRecord{Step: i, Decision: "d", Result: "r"})
		w.RecordContextEvent(ctx, run, i, ContextAssembled, "", ptr[int64](int64(i)))
	}
	must[string](t)(w.PutQuestion(ctx, run, 5, "which?", "", nil))
	const n = 4
	got := make([]int, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 5 {
				ch, _, err := r.Changes(ctx, c)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] += len(ch.Steps) + len(ch.Context) + len(ch.Requests) + len(ch.Runs)
			}
		}()
	}
	for range n {
		<-done
	}
	for i, g := range got {
		if g != 5*(5+5+1+1) {
			t.Errorf("goroutine %d read %d rows, want %d", i, g, 5*12)
		}
	}
}
