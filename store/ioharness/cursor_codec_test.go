package ioharness

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A cursor written down in one reader and read back by another opened on
// the same file (another process, as vigil agent started for a new link)
// tells exactly what the original tells: the rows written in between once,
// decisions and leases as they changed.
func TestCursorCodecResumesInAnotherReader(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "outlives the link", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	req := must[string](t)(w.PutPending(ctx, run, 2, "write", "a", ptr("A")))
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "before", Result: "r", Tokens: 10})
	w.RecordContextEvent(ctx, run, 1, "assembled", "", nil)
	cur := must[store.Cursor](t)(r.Head(ctx))
	b, err := r.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}

	// What happens while the link is down.
	if _, err := r.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: req}, Verdict: store.VerdictApprove}); err != nil {
		t.Fatal(err)
	}
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 2, Decision: "during the outage", Result: "r", Tokens: 10})

	other, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	back, err := other.DecodeCursor(b)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := r.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := other.Changes(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reset || len(got.Steps) != 1 || got.Steps[0].Decision != "during the outage" {
		t.Fatalf("resumed: reset %v, steps %+v", got.Reset, got.Steps)
	}
	if len(got.Requests) != 1 || !got.Requests[0].Resolved {
		t.Errorf("the decision made during the outage: %+v", got.Requests)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the resumed cursor tells\n%+v\nthe original\n%+v", got, want)
	}
}

// A written cursor read back against another store at the path (the
// file replaced) says Reset; a cursor of another layout or format is an
// error, never a guess.
func TestCursorCodecReplacedStoreResets(t *testing.T) {
	w, r := writerReader(t)
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "the first store", "/w"))
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "one", Result: "r", Tokens: 10})
	b, err := r.EncodeCursor(must[store.Cursor](t)(r.Head(ctx)))
	if err != nil {
		t.Fatal(err)
	}
	path2 := filepath.Join(t.TempDir(), "other.sqlite3")
	w2, err := harness.Create(path2)
	if err != nil {
		t.Fatal(err)
	}
	run2 := must[string](t)(w2.StartRun(ctx, "another store entirely", "/w"))
	w2.CheckpointStep(ctx, run2, harness.StepRecord{Step: 1, Decision: "two", Result: "r", Tokens: 10})
	w2.CheckpointStep(ctx, run2, harness.StepRecord{Step: 2, Decision: "three", Result: "r", Tokens: 10})
	w2.Close()
	r2, err := Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	back, err := r2.DecodeCursor(b)
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := r2.Changes(ctx, back)
	if err != nil || !ch.Reset {
		t.Errorf("a cursor of another store: %+v %v; want Reset", ch, err)
	}
	for _, bad := range []string{`{"v":9,"format":"io-harness","marks":{}}`, `{"v":1,"format":"starweaver","marks":{}}`, `nonsense`} {
		if _, err := r2.DecodeCursor([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
