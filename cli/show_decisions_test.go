package cli

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// The populated store io-harness 0.22 wrote holds one decided request:
// approval 1, deploy/prod.yaml, approved. Its row names no decider and no
// time, and the run's one decision event is about another target, so
// neither is made up.
func TestShowDecidedRequestsOfThePopulatedStore(t *testing.T) {
	p := sharedFixture(t, "store-0.22.0/populated.sqlite3")
	h := newHarness(t)
	r := h.run("show", "1", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "decided requests (1)",
		"approval:1  run 1, step 4  approved · by: not recorded · at: not recorded", "    write deploy/prod.yaml (12 bytes)")

	r = h.run("show", "1", "--markdown", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "## Decided requests", "| approval:1 | 1 | 4 | write deploy/prod.yaml | approved | *not recorded* | *not recorded* |")

	r = h.run("show", "1", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc jsonShow
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Decisions) != 1 {
		t.Fatalf("decisions = %+v", doc.Decisions)
	}
	d := doc.Decisions[0]
	if d.Key != "approval:1" || *d.Target != "deploy/prod.yaml" || *d.Decision != "approve" || !d.Resolved ||
		d.Channel != nil || d.DecidedAt != nil || d.Words != "approved" {
		t.Fatalf("decision = %+v", d)
	}
}

// Decisions written by others — the run's own terminal through the
// sqlite3 shell, an attached process's approval and the policy event its
// run records on reading it — show who decided.
func TestShowDecidedRequestsSayWhoDecided(t *testing.T) {
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	p := fixtureStore(t)
	sql := `UPDATE pending_questions SET answer = 'drop it', answered_by = 'human', resolved = 1 WHERE id = 1;
UPDATE pending_approvals SET resolved = 'deny' WHERE id = 2;
INSERT INTO policy_events (run_id, step, kind, act, target, decision, source) VALUES (5, 3, 'decision', 'write', 'CHANGELOG.md', 'deny', 'attached');
UPDATE plans SET verdict = 'revise', correction = 'announce first', decided_by = 'gate', resolved = 1 WHERE id = 1;`
	if out, err := exec.Command("sqlite3", p, sql).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	h := newHarness(t)
	r := h.run("show", "4", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "decided requests (3)",
		"approval:2  run 5, step 3  denied · by attached · at: not recorded",
		"question:1  run 7, step 2  answered “drop it” · by human",
		"plan:1  run 4, step 5  sent back for revision: announce first · by gate")
	r = h.run("show", "4", "--json", "--store", p)
	var doc jsonShow
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range doc.Decisions {
		got[d.Key] = *d.Channel + " " + d.Words
	}
	want := map[string]string{"approval:2": "attached denied", "question:1": "human answered “drop it”", "plan:1": "gate sent back for revision: announce first"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// deny --reason on io-harness is refused, not dropped: nothing is written.
func TestDenyReasonRefusedWhereTheFormatKeepsNone(t *testing.T) {
	p := fixtureStore(t)
	h := newHarness(t)
	r := h.run("deny", "approval:2", "--reason", "not on a Friday", "--store", p)
	r.wantCode(t, 3)
	contains(t, r.stderr, "vigil: approval:2 not decided: io-harness keeps no reason with a deny, so it would not reach the agent (leave out --reason)")
	r = h.run("show", "5", "--store", p)
	contains(t, r.stdout, "decided requests (0)")
}
