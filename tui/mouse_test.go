package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A click focuses the pane under the pointer and selects the row clicked,
// doing what enter or the cursor keys would there.
func TestMouseSelectsWhatIsClicked(t *testing.T) {
	d := newDriver(t, 120, 40)

	d.click("#1   Fix the flaky") // a runs row opens that run
	if d.m.focus != paneAgents {
		t.Fatalf("clicking a run focuses the agents pane, got %v", d.m.focus)
	}
	d.contains("#1 Fix the flaky parser test", "ran go test ./... (exit 0)")

	d.click("#4   Coordinate")
	d.click("#5 worker: update") // a tree row shows that agent's timeline
	d.contains("3 Timeline · #5 worker: update CH" /* the title gives way to its badges */)
	d.click("#4 Coordinate the v2.")

	d.click("2 spawned child 5") // a timeline row shows that step
	if d.m.focus != paneTimeline {
		t.Fatalf("clicking a step focuses the timeline, got %v", d.m.focus)
	}
	d.contains("4 Step 2 ")
	d.lacks("following ·") // a picked step stops following the tail

	d.click("plan 1  3 steps") // a queue row selects that request
	if d.m.focus != paneApprovals || selectedRequest(d) != "plan 1" {
		t.Fatalf("clicking plan 1: focus %v, selected %q", d.m.focus, selectedRequest(d))
	}

	// A click below the last row of a pane (the runs pane keeps only the
	// rows its runs fill: its bottom border) focuses it and selects nothing new.
	_, y := d.cellOf("#1   Fix the flaky")
	d.send(tea.MouseClickMsg{X: 10, Y: y + 1, Button: tea.MouseLeft})
	if d.m.focus != paneRuns {
		t.Fatalf("clicking the runs pane's blank rows focuses it, got %v", d.m.focus)
	}
	d.contains("3 Timeline · #4 Coordinate the v2.0 release")
}

// The wheel scrolls the pane under the pointer, not the focused one.
func TestMouseWheelScrollsThePaneUnderIt(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.contains("1–12 of 17 lines")
	d.wheel("ran make release-dry-run (exit 0)  ", tea.MouseWheelDown)
	d.contains("4–15 of 17 lines")
	if d.m.focus != paneRuns {
		t.Fatalf("the wheel moved focus to %v", d.m.focus)
	}
	d.wheel("── Result ──", tea.MouseWheelUp)
	d.contains("1–12 of 17 lines")
}

// A click on a drift turn selects it, as every pane's rows do.
func TestMouseSelectsADriftTurn(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.click("   2        2k")
	if c, _ := d.m.drift.Selected(); d.m.focus != paneDrift || c.Step != 2 {
		t.Fatalf("clicking turn 2: focus %v, turn %d", d.m.focus, c.Step)
	}
	d.click("TURN  ESTIMATE") // the column header selects nothing
	if c, _ := d.m.drift.Selected(); c.Step != 2 {
		t.Fatalf("clicking the header moved the cursor to turn %d", c.Step)
	}
}
