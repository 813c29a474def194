package ioharness

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A program that browses a store first and writes it second, in one
// process, on a store a crashed writer left (-wal and -shm, nobody holding
// them: the browsing connection reads them without rewriting -shm, which
// SQLite would then share read-only with every later connection here):
// the writer's commits and a decision made through the browsing handle both
// land, and the browser sees them.
func TestBrowseThenWriteInOneProcess(t *testing.T) {
	py := foreign.Python(t)
	ctx := context.Background()
	path := populatedStore(t, t.TempDir())
	py.MustExec(t, path, "INSERT INTO runs (goal, file) VALUES ('after the crash', '/w'); CRASH")
	if _, err := os.Stat(path + "-shm"); err != nil {
		t.Fatal("the crashed writer left no -shm")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runs := must[[]store.Run](t)(r.Runs(ctx))
	if len(runs) != 2 {
		t.Fatalf("%d runs: the crashed writer's commit is not read", len(runs))
	}
	cur := must[store.Cursor](t)(r.Head(ctx))

	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run := must[string](t)(w.StartRun(ctx, "written after browsing", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "first"}); err != nil {
		t.Fatalf("a write after browsing in the same process: %v", err)
	}
	id := must[string](t)(w.PutPending(ctx, run, 2, "exec", "make", nil)) // asked at step 2, not yet committed
	ch, _, err := r.Changes(ctx, cur)
	if err != nil || len(ch.Steps) != 1 || len(ch.Runs) == 0 {
		t.Fatalf("the browser does not see the write: %+v %v", ch, err)
	}
	res, err := r.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictApprove})
	if err != nil || !res.Won {
		t.Fatalf("decide through the browsing handle: %+v %v", res, err)
	}
	if req := must[store.Request](t)(w.Request(ctx, store.RequestKey{Kind: store.Approval, ID: id})); req.Decision != "approve" {
		t.Fatalf("the writer reads %q", req.Decision)
	}
	// And a second browser opened while the writer is open reads along.
	r2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if runs := must[[]store.Run](t)(r2.Runs(ctx)); len(runs) != 3 {
		t.Fatalf("a second browser sees %d runs", len(runs))
	}
	if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 2, Decision: "second"}); err != nil {
		t.Fatal(err)
	}
	if steps := must[[]store.Step](t)(r2.Steps(ctx, run)); len(steps) != 2 {
		t.Fatalf("the second browser sees %d steps", len(steps))
	}
}
