package livetail

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/ioharness" // registers the format store.Open reads
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// fixtureHub follows a fixture store; commit adds a step to it and waits
// until the hub's log has moved past it.
func fixtureHub(t *testing.T) (h *Hub, commit func(step int)) {
	t.Helper()
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err = New(func() (store.Source, error) { return store.Open(path, store.Options{ReadOnly: true}) }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, func(step int) {
		t.Helper()
		w, err := harness.OpenWriter(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		_, before := h.Mark()
		if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: step, Decision: "moved", Result: "ok"}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			h.Poke()
			if _, seq := h.Mark(); seq != before {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the hub did not read the commit")
			}
		}
	}
}

// Twenty sessions ask the same thing at one log position: the store is read
// once, for the ones asking while it is read and the ones asking after; a
// commit the hub reads makes the next ask read again.
func TestSharedReadsOncePerLogPosition(t *testing.T) {
	h, commit := fixtureHub(t)
	ctx := context.Background()
	var reads atomic.Int64
	read := func(v string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			reads.Add(1)
			time.Sleep(20 * time.Millisecond)
			return v, nil
		}
	}
	const sessions = 20
	got := make([]string, sessions)
	errs := make([]error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() { got[i], errs[i] = Shared(ctx, h, "detail", read("first")) })
	}
	wg.Wait()
	for i := range sessions {
		if got[i] != "first" || errs[i] != nil {
			t.Errorf("session %d got %q, %v", i, got[i], errs[i])
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads for %d sessions at one position", n, sessions)
	}
	if v, err := Shared(ctx, h, "detail", read("again")); v != "first" || err != nil || reads.Load() != 1 {
		t.Errorf("asked after the read: %q, %v, %d reads", v, err, reads.Load())
	}
	if v, _ := Shared(ctx, h, "stats", read("stats")); v != "stats" || reads.Load() != 2 {
		t.Errorf("another key: %q, %d reads", v, reads.Load())
	}
	commit(5)
	if v, _ := Shared(ctx, h, "detail", read("after")); v != "after" || reads.Load() != 3 {
		t.Errorf("after a commit: %q, %d reads", v, reads.Load())
	}
}

// A read that fails is not kept: the next ask reads again.
func TestSharedReadThatFailsIsNotKept(t *testing.T) {
	h, _ := fixtureHub(t)
	ctx := context.Background()
	boom := errors.New("boom")
	var reads atomic.Int64
	if _, err := Shared(ctx, h, "k", func(context.Context) (int, error) { reads.Add(1); return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed read: %v", err)
	}
	v, err := Shared(ctx, h, "k", func(context.Context) (int, error) { reads.Add(1); return 7, nil })
	if v != 7 || err != nil || reads.Load() != 2 {
		t.Errorf("after a failure: %d, %v, %d reads", v, err, reads.Load())
	}
}
