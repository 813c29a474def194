package tui

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The timeline's "N new" counts exactly the steps that arrived since the
// cursor left the bottom: a provider call that only re-times a step held
// (io-harness writes one per attempt, often before its step) is no new step.
func TestNewBadgeCountsOnlyArrivedSteps(t *testing.T) {
	d := newDriver(t, 120, 40)
	w := d.writer()
	ctx := context.Background()
	d.press("3")
	d.press("k") // off the bottom: following stops
	if d.m.timeline.Following() {
		t.Fatal("follow still on after moving")
	}
	total := int64(40)
	call := func(step, attempt int) {
		if err := w.RecordProviderCall(ctx, "4", store.ProviderCall{Step: step, Attempt: attempt, Provider: "p", TotalTokens: &total, LatencyMS: 5}); err != nil {
			t.Fatal(err)
		}
		d.refresh()
	}
	commit := func(n int) {
		if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: n, Decision: fmt.Sprintf("step %d arrives", n), Result: "r", Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		d.refresh()
	}
	call(2, 2) // a retry of a step held: nothing new
	d.lacks(" new ")
	call(5, 1) // the call of a step not written yet
	commit(5)
	call(5, 2)
	call(3, 2)
	commit(6)
	call(6, 1)
	d.contains("2 new · ")
	d.lacks("3 new", "4 new", "5 new")
}
