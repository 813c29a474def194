package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A decision made on an ssh:// store through the decision service is in
// this machine's audit log (the local user, the URL as the channel: an
// attempt before it is sent, the outcome after) and in the far machine's (the account ssh logged in as,
// for whom the client said). A decision lost to an earlier one says what
// the store holds.
func TestRemoteDecisionsAreAudited(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run, _ := w.StartRun(ctx, "audited", "/w")
	if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
		t.Fatal(err)
	}
	req, err := w.PutPending(ctx, run, 1, "write", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	local, far := filepath.Join(dir, "local", "audit.jsonl"), filepath.Join(dir, "far", "audit.jsonl")
	l, err := audit.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.MkdirAll(filepath.Dir(far), 0o700)
	t.Setenv("VIGIL_TEST_FAR_AUDIT", far)
	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, filepath.Join(dir, "hold")),
		Audit: l, Who: audit.Who{Name: "ann@laptop"}, Via: "vigil approve"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// What `vigil approve` does: the decision service, this machine's log.
	mk := &decision.Maker{Who: audit.Who{Name: "ann@laptop"}, Via: "vigil approve", Log: l}
	d := store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: req}, Verdict: store.VerdictApprove}
	res, err := mk.Make(ctx, c.Source(), decision.Ask{Decision: d})
	if err != nil || !res.Won {
		t.Fatalf("decide: %+v %v", res, err)
	}
	if res, err := mk.Make(ctx, c.Source(), decision.Ask{Decision: store.Decision{Key: d.Key, Verdict: store.VerdictDeny}}); err != nil || res.Won {
		t.Fatalf("a second decision: %+v %v", res, err)
	}
	url := "ssh://far" + path
	got := auditlog.Read(t, local)
	if len(got) != 4 {
		t.Fatalf("local log: %+v", got)
	}
	for i, want := range []struct{ outcome, verdict string }{{"attempt", "approve"}, {"won", "approve"}, {"attempt", "deny"}, {"lost", "deny"}} {
		r := got[i]
		if r.Outcome != want.outcome || r.Verdict != want.verdict || r.Store != url || r.Channel != url+" (vigil approve)" ||
			r.Who.Name != "ann@laptop" || r.Request != "approval "+req {
			t.Errorf("local line %d: %+v; want %s %s", i, r, want.outcome, want.verdict)
		}
	}
	if !strings.Contains(got[3].Held, "approve") {
		t.Errorf("the lost line does not say what the store holds: %+v", got[3])
	}
	fr := auditlog.Read(t, far)
	if len(fr) != 4 || fr[1].Outcome != "won" || fr[1].Store != path || fr[1].Who.Name != "far-account@far" ||
		fr[1].Channel != "vigil agent over ssh from 10.9.8.7 port 5555, for ann@laptop" {
		t.Errorf("far log: %+v", fr)
	}
}

// One decision through the far side's agent is one attempt line and one
// outcome line in each machine's log: here the local user through the
// URL, there the account ssh logged in as, for whom the client said.
func TestOneDecisionOneAttemptOneOutcome(t *testing.T) {
	ctx := context.Background()
	path, req, _ := leasedApproval(t)
	dir := t.TempDir()
	local, far := filepath.Join(dir, "local", "audit.jsonl"), filepath.Join(dir, "far", "audit.jsonl")
	l, err := audit.Open(local)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.MkdirAll(filepath.Dir(far), 0o700)
	t.Setenv("VIGIL_TEST_FAR_AUDIT", far)
	ann := audit.Who{Name: "ann@laptop"}
	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, filepath.Join(dir, "hold")),
		Audit: l, Who: ann, Via: "the explorer"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mk := &decision.Maker{Who: ann, Via: "the explorer", Log: l}
	if res, err := mk.Make(ctx, c.Source(), decision.Ask{Decision: store.Decision{Key: req.Key(), Verdict: store.VerdictApprove}}); err != nil || !res.Won {
		t.Fatalf("decide: %+v %v", res, err)
	}
	url := "ssh://far" + path
	for _, side := range []struct {
		log, store, who, channel string
	}{
		{local, url, "ann@laptop", url + " (the explorer)"},
		{far, path, "far-account@far", "vigil agent over ssh from 10.9.8.7 port 5555, for ann@laptop"},
	} {
		recs := auditlog.Read(t, side.log)
		if len(recs) != 2 {
			t.Errorf("%s: %d lines: %+v", side.log, len(recs), recs)
			continue
		}
		for i, want := range []string{audit.Attempt, audit.Won} {
			r := recs[i]
			if r.Outcome != want || r.Store != side.store || r.Who.Name != side.who || r.Channel != side.channel || r.Request != req.Key().String() {
				t.Errorf("%s line %d: %+v; want %s", side.log, i, r, want)
			}
		}
	}
}
