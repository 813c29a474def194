package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
)

// show names the approver vigil's own audit log knows: a decision made
// through vigil serve (its line as serve's decision service writes it,
// audit.Of) shows the key's name, not "attached" or "not recorded"; and a
// decision made with vigil approve names the person at the terminal.
func TestShowNamesTheApproverFromTheAuditLog(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	state := t.TempDir()
	h := newHarness(t)
	h.env = append(h.env, "XDG_STATE_HOME="+state, "USER=bob")

	// vigil serve decided approval 3 for alice: its log line, then the
	// store's compare-and-set.
	log, err := audit.Open(filepath.Join(state, "vigil", audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	deny := store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "3"}, Verdict: store.VerdictDeny}
	line := audit.Of(p, deny, "4", audit.Who{Name: "alice", Fingerprint: "SHA256:abc"}, "ssh 10.0.0.5:51234 (vigil serve)",
		store.DecideResult{Won: true}, nil, fixture.Now)
	line.StoreID = audit.StoreID(p) // as the decision service writes it
	if err := log.Append(line); err != nil {
		t.Fatal(err)
	}
	log.Close()
	w := writer(t, p)
	if _, err := w.ResolvePending(context.Background(), "3", store.VerdictDeny); err != nil {
		t.Fatal(err)
	}
	// bob approves approval 2 with vigil approve.
	h.run("approve", "2", "--store", p).wantCode(t, 0)

	r := h.run("show", "4", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout,
		"approval:3  run 4, step 5  denied · by alice (SHA256:abc) via ssh 10.0.0.5:51234 (vigil serve) · at: not recorded",
		"approval:2  run 5, step 3  approved · by bob@")
	r = h.run("show", "4", "--json", "--store", p)
	r.wantCode(t, 0)
	var doc jsonShow
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc.Decisions {
		if d.Key == "approval:3" && (d.Channel == nil || *d.Channel != "alice (SHA256:abc) via ssh 10.0.0.5:51234 (vigil serve)") {
			t.Fatalf("approval:3's channel %v", d.Channel)
		}
	}
}
