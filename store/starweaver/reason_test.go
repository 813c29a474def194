package starweaver

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Deny with a reason in the explorer: Starweaver's approval record keeps
// it (decision.reason), and the decided list shows it with who and when.
func TestExplorerDeniesWithAReason(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	e := newExplorer(t, store.Complete(s), 200, 56)
	e.press("6")
	e.advance(2 * time.Second)
	e.press("j", "j") // P1, as the panes test approves it
	e.advance(2 * time.Second)
	e.contains("RUN_SHELL go test ./payouts/...")
	e.press("D")
	e.contains("why — sent to the agent with the deny")
	for _, r := range "not before the release" {
		e.press(string(r))
	}
	e.press("enter")
	e.contains("✓ denied: approval approval_run_2d3e4f50")
	r, err := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: apprP1})
	if err != nil || r.Decision != "deny" || r.Reason != "not before the release" || r.DecidedBy != DecidedBy || r.DecidedAt.IsZero() {
		t.Fatalf("the record holds %+v %v", r, err)
	}
	// The decided list of its tree: open that run first.
	e.press("1", "g", "j", "enter", "6", "h")
	e.contains("denied: not before the release", "by vigil · at ")
}

// A reason being typed for an approval someone else decides meanwhile
// stays on screen, unsent, with what was decided and by whom.
func TestExplorerKeepsAReasonWhenDecidedElsewhere(t *testing.T) {
	s, path := openV07(t)
	ctx := context.Background()
	e := newExplorer(t, store.Complete(s), 200, 56)
	e.press("6")
	e.advance(2 * time.Second)
	e.press("j", "j")
	e.advance(2 * time.Second)
	e.press("D")
	for _, r := range "too risky" {
		e.press(string(r))
	}
	other, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if res, err := other.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP1}, Verdict: store.VerdictApprove}); err != nil || !res.Won {
		t.Fatal(res, err)
	}
	e.m.Refresh(cmdWait)
	e.contains("✗ decided elsewhere: approved", "by vigil · at ", "not sent — your text, kept: too risky", "RUN_SHELL go test ./payouts/...")
}
