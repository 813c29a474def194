package tui

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run deferred at its provider check: authorize_provider
// (src/run/gate.rs) writes the pending row at step 0 (put_pending), records
// PolicyEvent::decision(0, "net", target, "defer", "approver")
// (record_event) and finishes awaiting_approval before any step is
// committed. The timeline has no row; the step pane shows step 0 as not
// committed, with its policy event.
func TestStepPaneShowsPolicyOnlyStep(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const host = "api.example.com:443"
	run, _ := w.StartRun(ctx, "Summarise the changelog", "/work")
	// The explorer is open on the run from its start: the event and the
	// pause come while it is shown.
	d := openDriver(t, path, 120, 40)
	d.press("3")
	d.lacks("── Policy")
	if _, err := w.PutPending(ctx, run, 0, "net", host, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: run, Step: 0, Kind: store.PolicyDecision, Act: "net", Target: host,
		Decision: store.PolicyDefer, Source: "approver"}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, store.OutcomeAwaitingApproval); err != nil {
		t.Fatal(err)
	}
	w.Close()
	d.refresh()
	d.contains("no steps: the run committed none", "4 Step 0", "step 0 · not committed yet",
		"no step committed: the run recorded policy events at step 0", "── Policy (1)", "defer: net "+host+" (approver)")
}

// The same run once resumed: the resume approves the deferred check (its
// decision again at step 0, source resumed:<request>) and the run commits
// step 1. Step 0 still has no row; the first step's pane shows its events,
// each at its step.
func TestFirstStepPaneShowsStepZeroPolicy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const host = "api.example.com:443"
	run, _ := w.StartRun(ctx, "Summarise the changelog", "/work")
	req, err := w.PutPending(ctx, run, 0, "net", host, nil)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: run, Step: 0, Kind: store.PolicyDecision, Act: "net", Target: host,
		Decision: store.PolicyDefer, Source: "approver"}))
	must(w.FinishRun(ctx, run, store.OutcomeAwaitingApproval))
	if _, err := w.ResolvePending(ctx, req, store.VerdictApprove); err != nil {
		t.Fatal(err)
	}
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: run, Step: 0, Kind: store.PolicyDecision, Act: "net", Target: host,
		Decision: store.PolicyApprove, Source: "resumed:" + req}))
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: run, Step: 1, Kind: store.PolicyRefusal, Act: "write", Target: "secrets/k"}))
	must(w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read CHANGELOG.md", Result: "r", Tokens: 300}))
	must(w.FinishRun(ctx, run, store.OutcomeSuccess))
	w.Close()

	d := openDriver(t, path, 120, 40)
	d.press("3")
	d.contains("4 Step 1", "── Policy (3)", "step 0 · defer: net "+host+" (approver)", "step 0 · approve: net "+host+" (resumed:"+req+")",
		"refusal write secrets/k")
	d.lacks("step 1 · refusal")
}
