package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/views"
)

// A commit redraws the panes it moves and keeps the drawing of the others,
// and the frame is the one drawn whole.
func TestACommitRedrawsOnlyThePanesItMoves(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3") // the timeline, following the newest step
	w := d.writer()
	commit := func(n int) {
		t.Helper()
		if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 4 + n, Decision: fmt.Sprintf("tagged v2.0.0-rc%d", n), Result: "ok", Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		d.refresh()
		d.contains(fmt.Sprintf("tagged v2.0.0-rc%d", n))
	}
	commit(1)
	before, frames := d.m.paneDraws, d.m.frames
	commit(2)
	after := d.m.paneDraws
	// The driver draws a frame after every message, as a terminal is
	// drawn; a commit brings several (its changes, the step's detail, the
	// counts).
	if d.m.frames-frames < 3 {
		t.Fatalf("%d frames for a commit: the test sees nothing kept", d.m.frames-frames)
	}
	for _, p := range []pane{paneTimeline, paneStep, paneAgents} {
		if after[p] == before[p] {
			t.Errorf("pane %d was not drawn again after the commit that moved it", p)
		}
	}
	// The run list and the queue move with the counts, a few times a
	// second at most (countsEvery); the drift pane not at all (no sample
	// came).
	for p, most := range map[pane]int{paneApprovals: 1, paneRuns: 1, paneDrift: 0} {
		if n := after[p] - before[p]; n > most {
			t.Errorf("pane %d drawn %d times over %d frames of a commit; want at most %d", p, n, d.m.frames-frames, most)
		}
	}
	kept := ansi.Strip(d.m.Render())
	if whole, ok := d.keptIsWhole(kept); !ok {
		t.Fatalf("the frame from kept panes differs from the frame drawn whole:\nkept:\n%s\nwhole:\n%s", kept, whole)
	}
}

// A pane changed by a call the model did not make (no message, no
// refresh) is drawn changed on the next frame: its revision moved, and
// nothing had to say so.
func TestAPaneChangedBehindTheModelsBackIsDrawn(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.screen()
	runs := func() string { return strings.Join(d.m.drawn[paneRuns].lines, "\n") }
	it, ok := d.m.runs.Selected()
	if !ok || !strings.Contains(runs(), it.Run.Goal[:20]) {
		t.Fatalf("no run in the list to take away:\n%s", runs())
	}
	d.m.runs.SetItems(nil) // not through the model
	d.screen()
	if strings.Contains(runs(), it.Run.Goal[:20]) {
		t.Fatalf("a run list emptied behind the model's back still shows %q:\n%s", it.Run.Goal, runs())
	}
}

// The check every test's frames go through catches a kept drawing that is
// not what the pane draws now: it is what makes every other test of this
// package a test of the cache.
func TestTheScreenCheckCatchesAStaleDrawing(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.screen()
	d.m.drawn[paneRuns].lines[1] = "│ stale" // as a cache that missed a change would keep
	kept := ansi.Strip(d.m.Render())
	if _, ok := d.keptIsWhole(kept); ok {
		t.Fatal("a stale pane drawing was drawn from the cache unnoticed")
	}
}

// A frame with nothing changed draws no pane again (why the cache exists),
// and a key draws again only the panes it moved.
func TestNothingChangedIsNotDrawnAgain(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3") // the timeline
	d.screen()
	before := d.m.paneDraws
	for range 3 {
		d.screen()
	}
	if d.m.paneDraws != before {
		t.Fatalf("frames with nothing changed drew panes again: %v, then %v", before, d.m.paneDraws)
	}
	d.press("k")
	d.screen()
	after := d.m.paneDraws
	if after[paneTimeline] == before[paneTimeline] {
		t.Error("the timeline's cursor moved and it was not drawn again")
	}
	for _, p := range []pane{paneRuns, paneAgents, paneDrift, paneApprovals} {
		if after[p] != before[p] {
			t.Errorf("pane %d drawn again after a key that moved only the timeline", p)
		}
	}
	// The clock moves the panes that show it, and only those.
	before = after
	d.advance(time.Second)
	d.screen()
	after = d.m.paneDraws
	if after[paneRuns] == before[paneRuns] {
		t.Error("a second passed and the run list (its ages) was not drawn again")
	}
	for _, p := range []pane{paneTimeline, paneStep, paneDrift} {
		if after[p] != before[p] {
			t.Errorf("pane %d, which shows no clock, drawn again when only the clock moved", p)
		}
	}
}

// A key moves what it moves at once.
func TestAKeyIsDrawnAtOnce(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3")
	first := d.screen()
	d.press("k")
	if d.screen() == first {
		t.Fatal("the cursor's move is not on screen")
	}
	var _ views.Pane = d.m.panes[paneTimeline]
}

// A step committed that orphans the request its run asked at it changes
// what may be decided: the queue says so with that refresh, not with the
// next rebuild of the counts (the clock does not move here).
func TestAStepThatOrphansARequestMovesTheQueueAtOnce(t *testing.T) {
	ctx := context.Background()
	d, w, run := openAskingRun(t)
	// The driver moves on without reading the decision: step 2 commits.
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 2, Decision: "wrote anyway", Result: "r", Tokens: 10})
	d.refresh()
	d.contains("wrote anyway", "1 orphaned")
	if it, _ := d.m.approvals.Current(); it.Delivery != store.Orphaned {
		t.Fatalf("after the step: %v (%s)", it.Delivery, it.Why)
	}
}

// A lease let go of is a counts-only refresh too (leases are renewed with
// every step), but it changes whether the run's request can be decided:
// the queue says so with that refresh.
func TestALeaseLetGoMovesTheQueueAtOnce(t *testing.T) {
	ctx := context.Background()
	d, w, run := openAskingRun(t)
	w.ReleaseLease(ctx, run)
	d.refresh()
	if it, _ := d.m.approvals.Current(); it.Delivery == store.Deliverable {
		t.Fatalf("the lease is gone, the queue still says %v (%s)", it.Delivery, it.Why)
	}
}

// openAskingRun opens the explorer on a run holding its lease, at step 1,
// that asks to write at step 2; the queue shows the request deliverable.
func openAskingRun(t *testing.T) (*driver, *harness.Store, string) {
	t.Helper()
	path, w := createdStore(t, "runs.sqlite3")
	ctx := context.Background()
	run, _ := w.StartRun(ctx, "asks at step 2", "/w")
	w.AcquireLease(ctx, run, time.Hour)
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read", Result: "r", Tokens: 10})
	req, err := w.PutPending(ctx, run, 2, "write", "out.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := openDriver(t, path, 120, 40)
	if dl, why := d.item("approval " + req); dl != store.Deliverable {
		t.Fatalf("before: %v (%s)", dl, why)
	}
	d.screen()
	return d, w, run
}
