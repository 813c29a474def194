package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// `vigil approve` on a local store is in the user's audit log
// (~/.local/state/vigil/audit.jsonl without $XDG_STATE_HOME): one attempt
// line and one outcome line naming who decided and with which command; a
// deny that comes second is its own two lines, lost.
func TestDecisionsAreAudited(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	h.env = append(h.env, "USER=ann")
	h.run("approve", "2", "--store", p).wantCode(t, 0)
	log := filepath.Join(strings.TrimPrefix(h.env[0], "HOME="), ".local", "state", "vigil", audit.FileName)
	recs := auditlog.Read(t, log)
	if len(recs) != 2 {
		t.Fatalf("%d lines after one approve: %+v", len(recs), recs)
	}
	h.run("deny", "2", "--store", p).wantCode(t, ExitDecision)
	recs = auditlog.Read(t, log)
	for i, want := range []struct{ outcome, verb string }{{"attempt", "approve"}, {"won", "approve"}, {"attempt", "deny"}, {"lost", "deny"}} {
		if i >= len(recs) {
			t.Fatalf("%d lines: %+v", len(recs), recs)
		}
		r := recs[i]
		if r.Outcome != want.outcome || r.Verdict != want.verb || !strings.HasPrefix(r.Who.Name, "ann@") ||
			r.Channel != "vigil "+want.verb || r.Store != p || r.Request != "approval 2" {
			t.Errorf("line %d: %+v; want %s %s", i, r, want.outcome, want.verb)
		}
	}
	if len(recs) != 4 {
		t.Errorf("%d lines: %+v", len(recs), recs)
	}
	if fi, err := os.Stat(log); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the log: %v %v", fi, err)
	}
}

// With no state directory to keep the log in, nothing is decided: one line
// says why.
func TestNoAuditLogNoDecision(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	h.env = nil
	r := h.run("approve", "2", "--store", p)
	r.wantCode(t, ExitError)
	r.oneLine(t, "not decided", "audit log", "$HOME")
	s, err := ioharness.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if q, err := s.Request(t.Context(), store.RequestKey{Kind: store.Approval, ID: "2"}); err != nil || q.Resolved {
		t.Errorf("approval 2: %+v %v", q, err)
	}
}
