package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The layout is worked out when the screen is sized, not when a frame is
// drawn: a page key sent before any frame moves by the height the pane has
// on screen, at every size, and drawing a pane elsewhere (RenderPane)
// gives it its place back.
func TestPageKeyBeforeAnyFrame(t *testing.T) {
	d := newDriver(t, 120, 40)
	w := d.writer()
	ctx := context.Background()
	for n := 5; n <= 60; n++ {
		if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: n, Decision: fmt.Sprintf("step %d", n), Result: "ok", Tokens: 10}); err != nil {
			t.Fatal(err)
		}
	}
	d.refresh()
	page := func(size string, want int) {
		t.Helper()
		d.press("g", "pgdown")
		if st, _ := d.m.timeline.Selected(); st.Number != want {
			t.Fatalf("%s: pgdown from step 1 went to step %d, want %d", size, st.Number, want)
		}
	}
	d.press("3")
	// 120×40: the timeline is 15 rows, 13 of them steps; a page keeps one
	// row of the last in view.
	page("120×40", 1+12)
	// 80×24: the timeline takes the right column, 23 rows, 21 steps.
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	page("80×24", 1+20)
	d.m.RenderPane(int(paneTimeline), 100, 8)
	page("80×24 after RenderPane", 1+20)
	// Nothing was drawn on screen until now; the frame agrees with the keys.
	d.contains("  21 step 21")
}

// The step detail scrolls by its on-screen height before it is drawn too.
func TestDetailPagesBeforeAnyFrame(t *testing.T) {
	d := newDriver(t, 120, 40)
	w := d.writer()
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "result line %d\n", i)
	}
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "a long result", Result: long.String(), Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	if d.m.detail.RowID() == 0 {
		t.Fatal("the followed step's detail did not load")
	}
	// 120×40: the step pane is 14 rows, 12 of them text; a page is 11.
	d.press("4", "pgdown")
	d.contains("12–23 of ")
}

// A click lands on what the current layout puts under it, right after a
// resize, with no frame drawn in between: hit-tests use the layout worked
// out for the size, not the rectangles of the last frame.
func TestClickRightAfterResize(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.contains("2 Agents") // one frame at 120×40, so stale rectangles would exist
	click := func(x, y int) {
		d.send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	}

	// 80×24: runs are rows 0–6 (the four runs they hold), agents 7–22 of
	// the left column (32 wide), the timeline the right column. At 120×40,
	// row 9 was the agents pane's first line, under its column header.
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	click(5, 7+1+1) // the agents pane's second line: worker #5
	if d.m.focus != paneAgents || d.m.tree.Selected() != "5" {
		t.Fatalf("clicking the second agent line: focus %v, agent %q", d.m.focus, d.m.tree.Selected())
	}
	if d.m.timeline.RunID() != "5" {
		t.Fatalf("the timeline shows %q, want worker 5's steps", d.m.timeline.RunID())
	}
	click(40, 1+1) // the timeline's second row
	if st, _ := d.m.timeline.Selected(); d.m.focus != paneTimeline || st.Number != 2 {
		t.Fatalf("clicking the timeline's second row: focus %v, step %d", d.m.focus, st.Number)
	}

	// 120×40: the approval queue is rows 15–38 of the left column (the
	// runs pane keeps the 7 rows its four runs fill, the agents pane 8);
	// at 80×24 those rows were the agents pane's.
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	click(5, 15+1+1)
	if d.m.focus != paneApprovals {
		t.Fatalf("clicking the queue's second row focuses %v", d.m.focus)
	}
	if got := selectedRequest(d); got != "approval 2" { // the first is the deferred keys write
		t.Fatalf("clicking the queue's second row selected %q", got)
	}
}

// In the compact layout the right column shows the last right-hand pane
// focused: focusing one by key changes where clicks land at once.
func TestCompactRightPaneFollowsFocus(t *testing.T) {
	d := newDriver(t, 80, 24)
	d.press("5") // drift takes the right column
	d.press("1")
	d.send(tea.MouseClickMsg{X: 40, Y: 5, Button: tea.MouseLeft})
	if d.m.focus != paneDrift {
		t.Fatalf("a click in the right column after 5 focuses %v, want the drift pane", d.m.focus)
	}
	d.contains("5 Drift")
}
