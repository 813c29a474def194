package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run total with a step whose provider reported no usage (io-harness
// writes its tokens as 0: run_from in src/run/step.rs,
// usage.map(total_tokens).unwrap_or(0)) keeps the known sum and says how
// many steps it leaves out: in runs and show as text, and in --json as
// *_tokens_unreported beside the sum; tail's last line says it too.
func TestRunTokensUnreportedTextAndJSON(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	w := writer(t, p)
	ctx := context.Background()
	if err := w.RecordProviderCall(ctx, "4", store.ProviderCall{Step: 5, Attempt: 1, Provider: "p", LatencyMS: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, "4", twin.StepRecord{Step: 5, Decision: "usage never reported", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	quiet, err := w.StartRun(ctx, "a provider that never reports usage", "/work/shop")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, quiet, twin.StepRecord{Step: 1, Decision: "no usage either", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, "3", twin.StepRecord{Step: 2, Decision: "no usage on the paused run", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	r := newHarness(t).run("tail", "3", "--store", p)
	r.wantCode(t, ExitPaused)
	contains(t, r.stdout, "; 2 steps, 1.1k tokens + 1 step not reported)\n")
	r = newHarness(t).run("show", "4", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout,
		"  tokens     agent 10,900 + 1 step not reported, tree 23,000 + 1 step not reported\n",
		"  4        waiting      5  10.9k+?  ",
		"  └─ 6     running      2     3.7k  ",
		"  usage never reported                                                                              ?\n")
	r = newHarness(t).run("runs", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "  5       10.9k+?          11        23k+?  ", "  5            6k           5           6k  ",
		"  1             ?           1            ?  ")
	r = newHarness(t).run("show", "4", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc struct {
		Run  map[string]any   `json:"run"`
		Tree []map[string]any `json:"tree"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"agent_tokens": 10900.0, "agent_tokens_unreported": 1.0, "tree_tokens": 23000.0, "tree_tokens_unreported": 1.0} {
		if got, has := doc.Run[k]; !has || got != want {
			t.Errorf("run 4's %s = %v (present %v), want %v", k, got, has, want)
		}
	}
	// A run whose steps all reported says none went unreported; a run
	// whose every counted step went unreported has no known sum: null.
	r = newHarness(t).run("runs", "--json", "--store", p)
	r.wantCode(t, 0)
	var list struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	seen := 0
	for _, run := range list.Runs {
		tok, un := run["agent_tokens"], run["agent_tokens_unreported"]
		switch run["id"] {
		case "1":
			seen++
			if tok != 6000.0 || un != 0.0 {
				t.Errorf("run 1: tokens %v, unreported %v; want 6000 and 0", tok, un)
			}
		case quiet:
			seen++
			if tok != nil || un != 1.0 {
				t.Errorf("run %s: tokens %v, unreported %v; want null and 1", quiet, tok, un)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("runs --json lists %d of runs 1 and %s", seen, quiet)
	}
}
