package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// / searches the timeline as it is typed; n and N move between the
// matches, wrapping; the title says which match is selected; esc drops it.
func TestSearchTheTimeline(t *testing.T) {
	d := newDriver(t, 120, 32)
	fortySteps(d)
	d.press("3", "/")
	d.typeText("check 1")
	if !d.m.timeline.Capturing() {
		t.Fatal("the search does not take typed keys")
	}
	step := func(want int) {
		t.Helper()
		if st, _ := d.m.timeline.Selected(); st.Number != want {
			t.Fatalf("the cursor is on step %d, want %d:\n%s", st.Number, want, d.screen())
		}
	}
	step(10) // the first match from the cursor (the followed last step), wrapping
	d.press("enter")
	d.contains("/check 1 1 of 10 · n/N", "4 Step 10")
	d.lacks("following") // a search moves off the tail
	d.press("n", "n")
	step(12)
	d.contains("/check 1 3 of 10")
	d.press("N", "N", "N")
	step(19) // wrapped back past the first
	d.press("esc")
	d.lacks("/check 1")
	step(19)
	if d.m.focus != paneTimeline {
		t.Fatalf("esc that drops a search moved the focus to %v", d.m.focus)
	}
	d.press("/")
	d.typeText("no such step")
	d.contains("/no such step▏ no match")
	d.press("esc")
	d.lacks("no such step")
}

// The step filter's picker lists the tools and kinds the agent's steps
// hold (t, then the arrows and enter); the count says how many steps it
// keeps; esc shows every step.
func TestTimelineStepFilter(t *testing.T) {
	d := newDriver(t, 120, 32)
	fortySteps(d)
	d.press("3", "t", "j", "enter")
	d.contains("only tool read_file", "1 of 44", "   1 read RELEASING.md")
	d.lacks("ran check 44")
	d.press("t", "j", "enter")
	d.contains("only tool spawn_agent", "2 of 44", "   2 spawned child 5", "   3 spawn refused")
	d.lacks("read RELEASING.md")
	d.press("t", "j", "enter")
	d.contains("only tool run", "41 of 44", "  44 ran check 44")
	if st, _ := d.m.timeline.Selected(); st.Number != 3 && st.Number != 4 && st.Number < 5 {
		t.Fatalf("cursor on step %d", st.Number)
	}
	d.press("esc")
	d.lacks("only tool")
	d.contains("following · 44 steps")
	// A filter follows new steps it keeps.
	d.press("t", "j", "j", "j", "enter") // the timeline still follows its tail: filtering is not a move
	d.contains("only tool run", "following")
	w := d.writer()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 45, Decision: "read the notes", ToolCall: `read_file:{"path":"NOTES"}`, Result: "ok", Tokens: 9}); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 46, Decision: "ran check 46", ToolCall: `run:{"cmd":"make check-46"}`, Result: "ok", Tokens: 9}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.contains("  46 ran check 46", "42 of 46")
	d.lacks("read the notes")
	if st, _ := d.m.timeline.Selected(); st.Number != 46 {
		t.Fatalf("following a filtered timeline, the cursor is on step %d", st.Number)
	}
}

// The step detail searches its text: a match off screen is scrolled to.
func TestSearchTheStepDetail(t *testing.T) {
	d := newDriver(t, 120, 32)
	w := d.writer()
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "result line %d\n", i)
	}
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "a long result", Result: long.String(), Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.press("4", "/")
	d.typeText("line 9")
	d.press("enter")
	d.contains("/line 9 1 of 11", "result line 9 ")
	d.press("n")
	d.contains("/line 9 2 of 11", "result line 90")
	d.lacks("result line 1 ")
	d.press("N", "N")
	d.contains("/line 9 11 of 11", "result line 99")
}

// The agents, drift and approvals panes search their rows too.
func TestSearchEveryList(t *testing.T) {
	d := newDriver(t, 120, 32)
	d.press("2", "/")
	d.typeText("grandchild")
	d.press("enter")
	if d.m.tree.Selected() != "7" {
		t.Fatalf("searching the tree for grandchild selected %q", d.m.tree.Selected())
	}
	d.contains("/grandchild 1 of 1", "3 Timeline · #7 grandchild")

	d.press("esc", "esc", "1", "enter") // back to the root's tree
	d.press("5", "/")
	d.typeText("missing")
	d.press("enter")
	if c, _ := d.m.drift.Selected(); c.Step != 3 {
		t.Fatalf("searching drift for missing selected turn %d", c.Step)
	}
	d.contains("/missing 1 of 1")

	d.press("6", "/")
	d.typeText("exec")
	d.press("enter")
	if got := selectedRequest(d); got != "approval 3" {
		t.Fatalf("searching the queue for exec selected %q", got)
	}
	d.contains("/exec 1 of 1", "EXEC make release")
}
