package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// A writer and a separate read-only reader of the same file, as a harness
// and vigil are.
func writerReader(t *testing.T) (w, r *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := Create(path)
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

func changes(t *testing.T, r *Store, c Cursor) *Changes {
	t.Helper()
	ch, err := r.Changes(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestChangesSeesNewAndChangedRows(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	old := must[string](t)(w.StartRun(ctx, "before the cursor", "/w"))
	must[int64](t)(w.AcquireLease(ctx, old, time.Hour))
	oldReq := must[string](t)(w.PutPending(ctx, old, 1, "write", "a", ptr("A")))
	c := must[Cursor](t)(r.Head(ctx))
	if ch := changes(t, r, c); !ch.Empty() {
		t.Fatalf("changes right after Head: %+v", ch)
	}

	run := must[string](t)(w.StartRun(ctx, "after", "/w"))
	w.CheckpointStep(ctx, run, StepRecord{Step: 1, Decision: "read a", Result: "r", Tokens: 10})
	w.RecordContextEvent(ctx, run, 1, "assembled", "", ptr[int64](5))
	w.RecordContextEvent(ctx, run, 1, "memory_write", "k", nil)
	qid := must[string](t)(w.PutQuestion(ctx, run, 1, "which?", "", nil))
	w.RecordAgentEvent(ctx, AgentEvent{RunID: run, Step: 1, Kind: "budget_draw", Tokens: ptr[int64](10), Remaining: ptr[int64](90)})

	ch := changes(t, r, c)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != run || len(ch.Steps) != 1 || ch.Steps[0].Decision != "read a" ||
		len(ch.Context) != 1 || ch.Context[0].Reported != nil || len(ch.Requests) != 1 || ch.Requests[0].ID != qid ||
		len(ch.AgentEvents) != 1 || ch.LeasesChanged {
		t.Fatalf("changes = %+v", ch)
	}
	if ch := changes(t, r, c); !ch.Empty() {
		t.Fatalf("second call repeated rows: %+v", ch)
	}

	// Rows that change in place: a decision made elsewhere, a provider count
	// landing on a turn, a run finishing, a lease renewed.
	w.ResolvePending(ctx, oldReq, "deny")
	w.RecordContextReported(ctx, run, 1, 900)
	w.FinishRun(ctx, run, "success")
	time.Sleep(5 * time.Millisecond) // renewed_at has millisecond precision
	w.RenewLease(ctx, old)
	ch = changes(t, r, c)
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
	if ch := changes(t, r, c); !ch.Empty() {
		t.Fatalf("in-place changes repeated: %+v", ch)
	}
}

func TestChangesPagesAndResets(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "burst", "/w"))
	c := must[Cursor](t)(r.Head(ctx))
	for i := 1; i <= ChangesPage+500; i++ {
		w.RecordStepRow(ctx, run, StepRecord{Step: i, Decision: "d", Result: "r"})
	}
	ch := changes(t, r, c)
	if len(ch.Steps) != ChangesPage || !ch.More {
		t.Fatalf("first page: %d steps, More %v", len(ch.Steps), ch.More)
	}
	ch = changes(t, r, c)
	if len(ch.Steps) != 500 || ch.More || ch.Steps[499].Number != ChangesPage+500 {
		t.Fatalf("second page: %d steps, More %v", len(ch.Steps), ch.More)
	}
	c.(*SQLCursor).marks["steps"] += 1 << 20 // as if the store at the path were a different, shorter one
	if ch := changes(t, r, c); !ch.Reset {
		t.Error("a store whose ids went backwards was not reported as reset")
	}
}

func TestAppendStepRowsFoldsRetries(t *testing.T) {
	rows := []StepRow{
		{RowID: 1, RunID: "1", Number: 1, Decision: "read a"},
		{RowID: 2, RunID: "1", Number: 2, Decision: "retry 1 after Timeout in 500ms"},
		{RowID: 3, RunID: "1", Number: 2, Decision: "retry 2 after Timeout in 1s"},
	}
	steps := AppendStepRows(nil, rows)
	if len(steps) != 2 || !steps[1].Pending || len(steps[1].Retries) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	steps = AppendStepRows(steps, []StepRow{{RowID: 4, RunID: "1", Number: 2, Decision: "wrote b", Tokens: 7}})
	if len(steps) != 2 || steps[1].Pending || steps[1].Decision != "wrote b" || steps[1].RowID != 4 || len(steps[1].Retries) != 2 {
		t.Fatalf("after commit = %+v", steps)
	}
}
