package tui

import (
	"testing"
	"time"
)

// The populated store io-harness 0.22 wrote: its one decided request is
// listed with what was decided, and neither a decider nor a time is made up.
func TestDecidedListOfThePopulatedStore(t *testing.T) {
	d := openDriver(t, sharedFixture(t, "store-0.22.0/populated.sqlite3"), 200, 60)
	d.press("6")
	d.contains("nothing waits on a human", "h shows what was decided")
	d.press("h")
	d.contains("6 Approvals · decided · #1 write out.txt", "1 decided",
		"✓ approval 1  write deploy/prod.yaml", "approved", "by: not recorded by this store · at: not recorded by this store",
		"WRITE deploy/prod.yaml", "replicas: 4")
	d.press("h")
	d.contains("nothing waits on a human")
}

// Decisions made here and elsewhere in the open tree are listed as they
// land; the waiting queue is back on h, its cursor where it was.
func TestDecidedListFollowsTheTree(t *testing.T) {
	d := newDriver(t, 200, 60)
	onRequest(t, d, plan1)
	d.press("h")
	d.contains("nothing in this run's tree has been decided")
	d.press("h")
	d.press("a", "y")
	d.contains("✓ approved: plan 1")
	sqlite3(t, d.path, "UPDATE pending_questions SET answer = 'drop it', answered_by = 'human', resolved = 1 WHERE id = 1")
	d.refresh()
	d.press("h")
	d.contains("2 decided", "✓ question 1  Keep the replace", "answered “drop it”", "✓ plan 1  3 steps")
	// Deciding keys do nothing here.
	d.press("a")
	d.contains("these are decided: h shows what waits")
	d.press("g")
	d.contains("by human · at: not recorded by this store")
	d.press("h")
	d.advance(time.Second)
	if got := selectedRequest(d); got == "" || got == plan1.String() {
		t.Fatalf("the waiting queue's cursor is on %q", got)
	}
}
