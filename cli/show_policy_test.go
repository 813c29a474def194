package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run that asks about its provider's host before its first step and is
// deferred: authorize_provider (src/run/gate.rs) writes the pending row at
// step 0 (put_pending), records PolicyEvent::decision(0, "net", target,
// "defer", "approver") (record_event) and finishes awaiting_approval, and
// no step is ever committed (commit_step never runs). show lists that
// event at step 0 and says the step was not committed, beside the events
// of a step that was.
func TestShowPolicyEventsOfUncommittedSteps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := twin.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const host = "api.example.com:443"
	parked, _ := w.StartRun(ctx, "Summarise the changelog", "/work")
	if _, err := w.PutPending(ctx, parked, 0, "net", host, nil); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: parked, Step: 0, Kind: store.PolicyDecision, Act: "net", Target: host,
		Decision: store.PolicyDefer, Source: "approver"}))
	must(w.FinishRun(ctx, parked, store.OutcomeAwaitingApproval))
	// A run whose host was approved at step 0 and whose step 1 committed,
	// with a refusal in it (gate's Effect::Deny arm).
	ran, _ := w.StartRun(ctx, "Tidy the config", "/work")
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: ran, Step: 0, Kind: store.PolicyDecision, Act: "net", Target: host,
		Decision: store.PolicyApprove, Source: "approver"}))
	must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: ran, Step: 1, Kind: store.PolicyRefusal, Act: "write", Target: "secrets/k", Rule: "no-secrets"}))
	must(w.CheckpointStep(ctx, ran, twin.StepRecord{Step: 1, Decision: "write refused", Tokens: 90}))
	w.Close()

	h := newHarness(t)
	r := h.run("show", parked, "--store", path)
	r.wantCode(t, 0)
	contains(t, r.stdout, "agent steps (0)", "policy events (1)")
	if !regexp.MustCompile(`(?m)^\s+0\s+defer\s+net\s+` + regexp.QuoteMeta(host) + `\s+approver\s+step not committed$`).MatchString(r.stdout) {
		t.Errorf("show does not list the deferred step-0 event as not committed:\n%s", r.stdout)
	}
	r = h.run("show", ran, "--store", path)
	r.wantCode(t, 0)
	contains(t, r.stdout, "policy events (2)")
	if !regexp.MustCompile(`(?m)^\s+0\s+approve\s+net\s+`+regexp.QuoteMeta(host)+`\s+approver\s+step not committed$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\s+1\s+refused \(rule no-secrets\)\s+write\s+secrets/k\s*$`).MatchString(r.stdout) {
		t.Errorf("show does not list both events at their steps:\n%s", r.stdout)
	}
	r = h.run("show", parked, "--store", path, "--markdown")
	r.wantCode(t, 0)
	contains(t, r.stdout, "## Policy events", "| 0 | defer | net | `"+host+"` | approver | step not committed |")

	r = h.run("show", parked, "--json", "--store", path)
	r.wantCode(t, 0)
	var doc struct {
		Steps  []any `json:"steps"`
		Policy []struct {
			Step      int    `json:"step"`
			Committed bool   `json:"step_committed"`
			Decision  string `json:"decision"`
			Act       string `json:"act"`
			Target    string `json:"target"`
			Source    string `json:"source"`
		} `json:"policy_events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(doc.Steps) != 0 || len(doc.Policy) != 1 || doc.Policy[0].Step != 0 || doc.Policy[0].Committed ||
		doc.Policy[0].Decision != "defer" || doc.Policy[0].Act != "net" || doc.Policy[0].Target != host || doc.Policy[0].Source != "approver" {
		t.Errorf("show --json: steps %v, policy_events %+v", doc.Steps, doc.Policy)
	}
}
