package tui

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// decideElsewhere decides a request through a second handle on the store,
// as `vigil approve` from another terminal does (answered_by / decided_by
// 'attached').
func decideElsewhere(t *testing.T, path string, d store.Decision) {
	t.Helper()
	other, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if r, err := other.Decide(context.Background(), d); err != nil || !r.Won {
		t.Fatalf("deciding %v elsewhere: %+v %v", d.Key, r, err)
	}
}

// sqlite3 runs SQL through the sqlite3 command-line shell: a writer that
// is not vigil.
func sqlite3(t *testing.T, path, sql string) {
	t.Helper()
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	if out, err := exec.Command("sqlite3", path, ".timeout 5000", sql).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
}

var (
	approval2 = store.RequestKey{Kind: store.Approval, ID: "2"}
	question1 = store.RequestKey{Kind: store.Question, ID: "1"}
	plan1     = store.RequestKey{Kind: store.Plan, ID: "1"}

	planApprove = store.Decision{Key: plan1, Verdict: store.VerdictApprove}
)

func onRequest(t *testing.T, d *driver, k store.RequestKey) {
	t.Helper()
	d.press("6")
	selectRequest(d, k.String())
	d.advance(time.Second) // past the misfire guard
}

func TestDecidedElsewhereWhileBrowsingAnApproval(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, approval2)
	decideElsewhere(t, d.path, store.Decision{Key: approval2, Verdict: store.VerdictApprove})
	d.refresh()
	if got := selectedRequest(d); got != "approval 2" {
		t.Fatalf("the cursor moved to %q", got)
	}
	// The approval row records no decider; the run names one in the policy
	// event it writes when it reads the row.
	d.contains("✗ decided elsewhere: approved", "by: not recorded by this store", "seen at 12:20:01 UTC", "WRITE CHANGELOG.md", "decided elsewhere — nothing to send")
	w := d.writer()
	if err := w.RecordPolicyEvent(context.Background(), store.PolicyEvent{RunID: "5", Step: 3, Kind: store.PolicyDecision, Act: "write", Target: "CHANGELOG.md", Decision: store.PolicyApprove, Source: "attached"}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.contains("by attached · seen at")
	// Deciding keys say it is decided; nothing is written.
	d.press("d")
	d.contains("approval 2 was already approved elsewhere: nothing to send")
	if d.m.approvals.Capturing() {
		t.Fatal("a decided request opened a confirmation")
	}
	// Moving on lets it go.
	d.press("j")
	if selectedRequest(d) == "approval 2" {
		t.Fatal("j did not move on")
	}
	d.lacks("WRITE CHANGELOG.md", "decided elsewhere")
}

func TestDecidedElsewhereWhileConfirmingAnApproval(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, approval2)
	d.press("d")
	d.contains("Deny write CHANGELOG.md?")
	decideElsewhere(t, d.path, store.Decision{Key: approval2, Verdict: store.VerdictApprove})
	d.refresh()
	if got := selectedRequest(d); got != "approval 2" {
		t.Fatalf("the cursor moved to %q under an open confirmation", got)
	}
	d.contains("✗ decided elsewhere: approved", "your deny was not sent")
	d.lacks("Deny write CHANGELOG.md?")
	// The y that was meant for the prompt sends nothing.
	d.press("y")
	if r := mustRequest(t, d.m.src, approval2); r.Decision != "approve" {
		t.Fatalf("the row says %q", r.Decision)
	}
}

func TestConfirmationKeepsItsRequestWhenAnotherIsDecided(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, approval2)
	d.press("d")
	d.contains("Deny write CHANGELOG.md?")
	decideElsewhere(t, d.path, store.Decision{Key: question1, Text: "keep it"})
	// A new request arrives too.
	if _, err := d.writer().PutPending(context.Background(), "7", 3, "read", "NEWS.md", nil); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	if got := selectedRequest(d); got != "approval 2" {
		t.Fatalf("the cursor moved to %q under an open confirmation", got)
	}
	d.contains("Deny write CHANGELOG.md?")
	d.press("y")
	d.contains("✓ denied: approval 2")
}

func TestDecidedElsewhereWhileAnsweringAQuestion(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, question1)
	d.press("enter")
	d.typeText("keep it for now")
	// The run's own terminal answers, through a writer that is not vigil.
	sqlite3(t, d.path, "UPDATE pending_questions SET answer = 'drop it', answered_by = 'human', resolved = 1 WHERE id = 1")
	d.refresh()
	if got := selectedRequest(d); got != "question 1" {
		t.Fatalf("the cursor moved to %q", got)
	}
	d.contains("✗ decided elsewhere: answered “drop it”", "by human", "not sent — your text, kept: keep it for now")
	if d.m.approvals.Capturing() {
		t.Fatal("the answer field is still open on a decided question")
	}
	// Typing goes nowhere near the store; moving on keeps the text on screen.
	d.press("j")
	d.contains("your unsent text for question 1: keep it for now")
	// The next text field opens with it, to send, edit or discard.
	selectRequest(d, "plan 1")
	d.advance(time.Second)
	d.press("r")
	d.typeText(", then tag")
	if got := d.m.approvals.Draft(); got != "keep it for now, then tag" {
		t.Fatalf("the revision opened with %q (typing goes at its end)", got)
	}
	// esc keeps plan 1's draft for plan 1 (issue 29): it comes back once,
	// the text kept from the question not added to it again.
	d.press("esc")
	d.advance(time.Second)
	d.press("r")
	if got := d.m.approvals.Draft(); got != "keep it for now, then tag" {
		t.Fatalf("the revision opened again with %q, not its own draft once", got)
	}
}

func TestDecidedElsewhereWhileRevisingAPlan(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, plan1)
	d.press("r")
	d.typeText("tag after the notes")
	decideElsewhere(t, d.path, store.Decision{Key: plan1, Verdict: store.VerdictApprove})
	d.refresh()
	if got := selectedRequest(d); got != "plan 1" {
		t.Fatalf("the cursor moved to %q", got)
	}
	d.contains("✗ decided elsewhere: approved", "by attached", "your text, kept: tag after the notes", "plan 1: 3 steps")
	if got := d.m.approvals.Draft(); got != "tag after the notes" {
		t.Fatalf("draft = %q", got)
	}
}

func TestDecidedElsewhereWhileConfirmingAPlanCancel(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, plan1)
	d.press("d")
	d.contains("Cancel plan 1?")
	decideElsewhere(t, d.path, store.Decision{Key: plan1, Verdict: store.VerdictRevise, Text: "announce first"})
	d.refresh()
	d.contains("✗ decided elsewhere: sent back for revision: announce first", "your cancel was not sent")
}

func TestDecidedElsewhereWhileBrowsingAQuestion(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, question1)
	decideElsewhere(t, d.path, store.Decision{Key: question1, Text: "keep it"})
	d.refresh()
	if got := selectedRequest(d); got != "question 1" {
		t.Fatalf("the cursor moved to %q", got)
	}
	d.contains("✗ decided elsewhere: answered “keep it”", "by attached")
}

func TestOwnDecisionMovesOn(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, approval2)
	d.press("a", "y")
	d.contains("✓ approved: approval 2")
	d.lacks("decided elsewhere")
	if selectedRequest(d) == "approval 2" {
		t.Fatal("the pane's own decision was held as if made elsewhere")
	}
}

// io-harness keeps no reason with a deny or a cancel: the pane says it
// would not reach the agent instead of taking text that reaches nobody.
func TestDenyWithAReasonWhereTheFormatKeepsNone(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, approval2)
	d.press("D")
	d.contains("no reason reaches the agent in io-harness: d denies without one")
	if d.m.approvals.Capturing() {
		t.Fatal("a reason field opened for a format that drops it")
	}
	onRequest(t, d, plan1)
	d.press("D")
	d.contains("no reason reaches the agent in io-harness: d cancels; r revises with text")
	if r := mustRequest(t, d.m.src, approval2); r.Resolved {
		t.Fatal("D wrote a decision")
	}
}

func TestDecidedElsewhereWhileBrowsingAPlan(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, plan1)
	sqlite3(t, d.path, "UPDATE plans SET verdict = 'cancel', decided_by = 'gate', resolved = 1 WHERE id = 1")
	d.refresh()
	if got := selectedRequest(d); got != "plan 1" {
		t.Fatalf("the cursor moved to %q", got)
	}
	d.contains("✗ decided elsewhere: cancelled", "by gate", "1. tag v2.0.0")
}
