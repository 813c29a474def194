package ioharness

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// On a full disk a store is browsed as ever (browsing writes nothing), and
// a decision fails with one line that says the disk is full, leaving no
// -wal or -shm behind and no byte changed.
func TestDiskFull(t *testing.T) {
	if !foreign.InMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	foreign.MountTmpfs(t, dir, 1<<20)
	path := filepath.Join(dir, "runs.sqlite3")
	ctx := context.Background()
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run := must[string](t)(w.StartRun(ctx, "on a full disk", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	for i := 1; i <= 20; i++ {
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: i, Decision: "d", Result: strings.Repeat("r", 2000)}); err != nil {
			t.Fatal(err)
		}
	}
	id := must[string](t)(w.PutPending(ctx, run, 21, "exec", "make release", nil)) // asked at step 21, not yet committed
	// The driver stays: this process holds the lease.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	foreign.FillDisk(t, dir)
	before := foreign.Snap(t, dir)

	s, err := Open(path)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 1 {
		t.Fatalf("browse on a full disk: %d runs, %v", len(runs), err)
	}
	if steps, err := s.Steps(ctx, run); err != nil || len(steps) != 20 {
		t.Fatalf("steps on a full disk: %d, %v", len(steps), err)
	}
	_, err = s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictApprove})
	if err == nil {
		t.Fatal("a decision was written on a full disk")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, "disk is full") {
		t.Errorf("decision on a full disk says %q: want one line naming the store and saying the disk is full", msg)
	}
	var se *store.Error
	if !errors.As(err, &se) {
		t.Errorf("the error is a %T, not a *store.Error", err)
	}
	s.Close()
	if d := before.Diff(foreign.Snap(t, dir)); d != "" {
		t.Errorf("on a full disk: %s", d)
	}
}
