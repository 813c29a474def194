package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run parked on a question: the flat loop's `finish(…, "awaiting_answer")`
// (src/run/step.rs) through Store::finish_run (src/state/runs.rs), which
// pauses only awaiting_approval and awaiting_plan, so this run's row says
// completed and has a run_outcomes summary with success 0. io-harness's own
// RunOutcome::AwaitingAnswer (src/run.rs) says the run "is paused, not
// finished", and resume_with_answer drives it on. A person sees it paused,
// waiting on one question, the store's status and outcome as written, and
// neither a finished time nor a success or failure; its counts are its
// steps'.
func TestAwaitingAnswerIsPausedNotFinished(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := twin.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := w.StartRun(ctx, "Ask what was wanted", "/work")
	for _, st := range []twin.StepRecord{{Step: 1, Decision: "read schema.sql", Tokens: 700}, {Step: 2, Decision: "asked which column", Tokens: 300}} {
		if err := w.CheckpointStep(ctx, run, st); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.PutQuestion(ctx, run, 2, "Keep the old column?", "", []string{"keep", "drop"}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, store.OutcomeAwaitingAnswer); err != nil {
		t.Fatal(err)
	}
	w.Close()

	h := newHarness(t)
	r := h.run("runs", "--json", "--store", path)
	r.wantCode(t, 0)
	var doc struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Runs) != 1 {
		t.Fatalf("runs --json: %v\n%s", err, r.stdout)
	}
	got := doc.Runs[0]
	for k, want := range map[string]any{"state": "paused", "status": "completed", "outcome": "awaiting_answer",
		"success": nil, "finished_at": nil, "duration_ms": nil, "agent_steps": 2.0, "agent_tokens": 1000.0, "agent_waiting": 1.0} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	r = h.run("show", run, "--store", path)
	r.wantCode(t, 0)
	contains(t, r.stdout, "state      paused", "outcome    awaiting_answer", "steps      agent 2, tree 2", "open requests (1)")
	if strings.Contains(r.stdout, "finished") {
		t.Errorf("show says a paused run finished:\n%s", r.stdout)
	}
}
