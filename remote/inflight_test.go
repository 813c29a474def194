package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/store"
)

// slowDecide is a store whose compare-and-set takes a while (a writer
// holding the database, a slow disk): the test agent's, with
// VIGIL_TEST_SLOW_DECIDE.
type slowDecide struct {
	store.Source
	by time.Duration
}

func (s slowDecide) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	time.Sleep(s.by)
	return s.Source.Decide(ctx, d)
}

// detachingSSH is an ssh whose remote command outlives it, as a far
// agent outlives a dropped link: killing it leaves the agent running
// with its calls in flight.
func detachingSSH(t *testing.T) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakessh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nfor last; do :; done\nexec 3<&0\nsh -c \"$last\" <&3 3<&- &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{p}
}

// The link drops while the far agent is writing a decision. The explorer
// reconnects and reads the request again through a new agent, which waits
// until the old agent has finished the decision: the near log's last line
// about it says what the store holds, never "it still waits" followed by
// the old agent's write (the far log's won).
func TestDecisionInFlightIsReadAgainAfterTheOldAgentFinishes(t *testing.T) {
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
	t.Setenv("VIGIL_TEST_FAR_LOCK", DecideLock(filepath.Join(dir, "far"), path))
	t.Setenv("VIGIL_TEST_SLOW_DECIDE", "6s")
	ann := audit.Who{Name: "ann@laptop"}
	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: detachingSSH(t), RemoteVigil: realAgent(t, filepath.Join(dir, "no-hold")),
		Audit: l, Who: ann, Via: "the explorer"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	made := make(chan error, 1)
	go func() {
		mk := &decision.Maker{Who: ann, Via: "the explorer", Log: l}
		_, err := mk.Make(ctx, c.Source(), decision.Ask{Decision: store.Decision{Key: req.Key(), Verdict: store.VerdictApprove}})
		made <- err
	}()
	// The far agent has the decision: its attempt line is written.
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(far)
			lb, _ := os.ReadFile(local)
			t.Logf("far log:\n%s\nlocal log:\n%s", b, lb)
		}
	}()
	waitUntil(t, 20*time.Second, "the far agent's attempt line", func() bool {
		b, _ := os.ReadFile(far)
		return strings.Contains(string(b), `"outcome":"attempt"`)
	})
	c.mu.Lock()
	c.conn.cmd.Process.Kill()
	c.mu.Unlock()
	select {
	case err := <-made:
		if !errors.Is(err, audit.ErrOutcomeUnknown) {
			t.Fatalf("the decision the link took: %v; want its outcome unknown", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the decision never returned after the link dropped")
	}
	// The link comes back by itself and the request is read again.
	var again audit.Record
	waitUntil(t, 30*time.Second, "a read-again line", func() bool {
		for _, r := range auditlog.Read(t, local) {
			if r.Outcome == audit.ReadAgain {
				again = r
				return true
			}
		}
		return false
	})
	waitUntil(t, 30*time.Second, "the far agent's won line", func() bool {
		b, _ := os.ReadFile(far)
		return strings.Contains(string(b), `"outcome":"won"`)
	})
	if !strings.Contains(again.Held, `the store holds "approve"`) {
		t.Errorf("read again: %q, while the far agent's decision won", again.Held)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
