package serve

import (
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
)

// A decision made in a session goes through the decision service once: one
// attempt line and one outcome line in the server's audit log, each naming
// the key that decided (its name and fingerprint) and the session.
func TestSessionDecisionIsAuditedOnce(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.approve, 120, 40)
	a.waitFor("Coordinate the v2.0 release", 10*time.Second)
	selectApproval2(a)
	a.waitFor("alice@desk (approver)", 2*time.Second)
	a.typ("a")
	a.typ("y")
	a.waitFor("✓ approved: approval 2", 3*time.Second)
	recs := auditlog.Read(t, ts.srv.AuditPath())
	if len(recs) != 2 {
		t.Fatalf("%d lines for one decision: %+v", len(recs), recs)
	}
	fp := gossh.FingerprintSHA256(ts.approve.signer.PublicKey())
	for i, want := range []string{audit.Attempt, audit.Won} {
		r := recs[i]
		if r.Outcome != want || r.Request != "approval 2" || r.Who.Name != "alice@desk" || r.Who.Fingerprint != fp ||
			!strings.HasPrefix(r.Channel, "ssh 127.0.0.1:") || r.Store != ts.store {
			t.Errorf("line %d: %+v; want %s", i, r, want)
		}
	}
}
