package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run whose steps include one the provider reported no usage for
// (io-harness writes its tokens as 0: run_from in src/run/step.rs,
// usage.map(total_tokens).unwrap_or(0)) has a total that is only the known
// part: the runs pane, the agent tree and the run summary say so, never a
// sum that passes for the spend.
func TestRunTokensWithUnreportedSteps(t *testing.T) {
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
	d.contains("usage never reported")
	line := func(has string) string {
		for _, l := range strings.Split(d.screen(), "\n") {
			if strings.Contains(l, has) {
				return l
			}
		}
		t.Fatalf("no line has %q:\n%s", has, d.screen())
		return ""
	}
	// The tree's 23k are known; its root's 10.9k leave step 5 out.
	if l := line("#4   Coordinate"); !strings.Contains(l, " 23k+? ") {
		t.Fatalf("the runs pane's tree total does not say a step went unreported: %q", l)
	}
	if l := line("◆ #4 Coordinate the v2."); !strings.Contains(l, " 11k+? ") {
		t.Fatalf("the agent tree's own total does not say a step went unreported: %q", l)
	}
	if l := line("#5 worker: update"); strings.Contains(l, "+?") {
		t.Fatalf("a worker whose steps all reported is marked: %q", l)
	}
	d.press("i")
	d.contains("agent: 5 steps, 10.9k tokens + 1 step not reported", "tree: 4 agents, 11 steps, 23k tokens + 1")
}
