package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// A step whose provider reported no usage (io-harness writes tokens 0 then:
// run_from in src/run/step.rs, usage.map(total_tokens).unwrap_or(0)) is
// printed by tail as not reported and written by show --json as null.
func TestUnknownStepTokensTailAndJSON(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	w := writer(t, p)
	ctx := context.Background()
	if err := w.RecordProviderCall(ctx, "1", store.ProviderCall{Step: 6, Attempt: 1, Provider: "p", LatencyMS: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, "1", twin.StepRecord{Step: 6, Decision: "usage never reported", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	r := newHarness(t).run("tail", "1", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "#1 step 6  usage never reported  →  ok  (tokens not reported)\n", "#1 step 5  ran go test ./... (exit 0)  →  [ok]  (1500 tokens)\n")
	if strings.Contains(r.stdout, "(0 tokens)") {
		t.Fatalf("tail prints an unknown count as 0:\n%s", r.stdout)
	}
	r = newHarness(t).run("show", "1", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc struct {
		Steps []map[string]any `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, st := range doc.Steps {
		tok, has := st["tokens"]
		switch n := st["number"].(float64); {
		case !has:
			t.Fatalf("step %v has no tokens field", n)
		case n == 6 && tok != nil:
			t.Fatalf("step 6's unknown count is written as %v, want null", tok)
		case n == 5 && tok != float64(1500):
			t.Fatalf("step 5's count is %v, want 1500", tok)
		}
	}
}
