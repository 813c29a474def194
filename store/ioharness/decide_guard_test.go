package ioharness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A decision's facts are read before the write lock; whatever lands between
// that read and the lock is seen under it. Here a crash resume replays the
// asking step and asks again (tests/attach.rs F7) right then: the request
// the decision was for is an orphan by the time it would be written, and it
// is refused, not written.
func TestDecideSeesWhatLandsBeforeTheLock(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "parked", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read a", Result: "r"})
	old := must[string](t)(w.PutPending(ctx, run, 2, "write", "a", ptr("A")))
	var again string
	beforeDecideLock = func() {
		again = must[string](t)(w.PutPending(ctx, run, 2, "write", "a", ptr("A")))
	}
	defer func() { beforeDecideLock = nil }()
	_, err := r.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: old}, Verdict: store.VerdictApprove})
	var refused *store.RefusedError
	if !errors.As(err, &refused) || refused.Delivery != store.Orphaned {
		t.Fatalf("decided a request asked again meanwhile (in %s): %v", again, err)
	}
	if q := must[store.Request](t)(r.Request(ctx, store.RequestKey{Kind: store.Approval, ID: old})); q.Resolved {
		t.Fatal("the orphan was written")
	}
	// And without anything landing, the same decision goes through.
	beforeDecideLock = nil
	res, err := r.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: again}, Verdict: store.VerdictApprove})
	if err != nil || !res.Won {
		t.Fatalf("the live request: %+v %v", res, err)
	}
}
