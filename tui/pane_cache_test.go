package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness"
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
		if err := w.CheckpointStep(context.Background(), "4", ioharness.StepRecord{Step: 4 + n, Decision: fmt.Sprintf("tagged v2.0.0-rc%d", n), Result: "ok", Tokens: 10}); err != nil {
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
	for _, p := range []pane{paneTimeline, paneStep, paneAgents, paneRuns} {
		if after[p] == before[p] {
			t.Errorf("pane %d was not drawn again after the commit that moved it", p)
		}
	}
	// The queue moves with the run (an orphan's reason names the step the
	// run is at) once; the drift pane not at all (no sample came).
	for p, most := range map[pane]int{paneApprovals: 1, paneRuns: 1, paneDrift: 0} {
		if n := after[p] - before[p]; n > most {
			t.Errorf("pane %d drawn %d times over %d frames of a commit; want at most %d", p, n, d.m.frames-frames, most)
		}
	}
	kept := d.screen()
	d.m.touchAll()
	if whole := d.screen(); whole != kept {
		t.Fatalf("the frame from kept panes differs from the frame drawn whole:\nkept:\n%s\nwhole:\n%s", kept, whole)
	}
}

// The check the tests run with catches a pane changed behind the cache's
// back: it is what makes every other test of this package a test of the
// cache.
func TestPaneCacheCheckCatchesAnUntouchedChange(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.screen()
	d.m.runs.SetItems(nil) // not through the model: no touch
	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("a pane changed untouched was drawn from the cache unnoticed")
		}
		if !strings.Contains(r.(string), "inputs changed untouched") {
			t.Fatalf("panic: %v", r)
		}
	}()
	d.screen()
}

// A key moves what it moves at once (every pane is drawn again after one).
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
