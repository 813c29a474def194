package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A step whose provider reported no usage is written by io-harness with
// tokens 0 (run_from in src/run/step.rs: usage.map(total_tokens).unwrap_or(0));
// the timeline and the step pane say the count is not known, never 0.
func TestUnknownStepTokensAreNotZero(t *testing.T) {
	d := newDriver(t, 120, 40)
	w := d.writer()
	ctx := context.Background()
	if err := w.RecordProviderCall(ctx, "4", store.ProviderCall{Step: 5, Attempt: 1, Provider: "p", LatencyMS: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: 5, Decision: "usage never reported", Result: "r"}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.press("3")
	d.contains("usage never reported")
	var row string
	for _, l := range strings.Split(d.screen(), "\n") {
		if strings.Contains(l, "usage never reported") && row == "" {
			row = l
		}
	}
	if !strings.Contains(row, "     ? ") {
		t.Fatalf("the timeline row does not say the count is unknown: %q", row)
	}
	d.contains("step 5 · tokens not reported")
	d.lacks("step 5 · 0 tokens")
}
