package ioharness_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/watch"
)

// A Go harness that tails the store it writes (the harness's handle writes,
// a reader in the same process follows) sees each of its own commits: the
// reader's Version moves with them, so the watcher never holds their write
// events back as showing nothing new (watch.Options.Version).
func TestAWriterSeesItsOwnCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	run, _ := w.StartRun(ctx, "tails itself", "/w")
	cur, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec := r.Watch()
	wt, err := watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version})
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	for step := 1; step <= 5; step++ {
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: step, Decision: "own"}); err != nil {
			t.Fatal(err)
		}
		found := false
		for deadline := time.After(5 * time.Second); !found; {
			select {
			case sig := <-wt.C():
				if sig.Kind != watch.Changed {
					wt.Ack(false)
					continue
				}
				ch, next, err := r.Changes(ctx, cur)
				if err != nil {
					t.Fatal(err)
				}
				cur = next
				for _, s := range ch.Steps {
					found = found || s.Number == step
				}
				wt.Ack(!ch.Empty())
			case <-deadline:
				t.Fatalf("step %d, committed by the store's own connection, never signalled; %+v", step, wt.Stats())
			}
		}
	}
}
