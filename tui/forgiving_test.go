package tui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Issue 29 item 11: q and esc in the help or summary overlay close it; they
// never quit the app (ctrl+c still does).
func TestOverlaysCloseOnQ(t *testing.T) {
	d := newDriver(t, 120, 32)
	for _, open := range []string{"?", "i"} {
		for _, closeKey := range []string{"q", "esc"} {
			d.press(open)
			if !d.m.help && !d.m.summaryOn {
				t.Fatalf("%s opened no overlay", open)
			}
			d.press(closeKey)
			if d.quit {
				t.Fatalf("%s in the overlay opened by %s quit vigil", closeKey, open)
			}
			if d.m.help || d.m.summaryOn {
				t.Fatalf("%s left the overlay opened by %s open", closeKey, open)
			}
			d.lacks("Help · keys", "· summary")
		}
	}
	d.press("?", "ctrl+c")
	if !d.quit {
		t.Fatal("ctrl+c in the help did not quit")
	}
}

// Issue 29 item 16: the help lists the runs pane's state glyphs.
func TestHelpListsStateGlyphs(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("?")
	d.contains("Run states: ● running · ◆ waiting · ‖ paused", "✓ succeeded", "press ?, q or esc to close")
}

// Issue 29 item 14: w from another pane goes to the oldest waiting request
// that can be decided, even when the queue's cursor was left on it; in the
// queue, w steps on to the next one.
func TestNextWaitingGoesToTheOldestFirst(t *testing.T) {
	d := newDriver(t, 120, 32)
	d.press("6", "j") // approval 2: the oldest one this store lets vigil decide (approval 1's run is paused)
	if got := d.m.approvals.Selected().String(); got != "approval 2" {
		t.Fatalf("j in the queue selected %s", got)
	}
	d.press("1", "w")
	if d.m.focus != paneApprovals {
		t.Fatalf("w focused %v", d.m.focus)
	}
	if got := d.m.approvals.Selected().String(); got != "approval 2" {
		t.Fatalf("w from the runs pane went to %s, not the oldest waiting request approval:2", got)
	}
	d.press("w") // pressed again where it landed: back
	if d.m.focus != paneRuns {
		t.Fatalf("w again went to %v, not back to the runs pane", d.m.focus)
	}
	d.press("6", "w") // in the queue: the next one
	if got := d.m.approvals.Selected().String(); got != "plan 1" {
		t.Fatalf("w in the queue went to %s, not the next request plan:1", got)
	}
}

// Issue 29 item 12: a decision key the selected request does not take says
// why in the queue's footer, with the keys it does take.
func TestMisfitDecisionKeySaysWhy(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("6", "j", "j") // plan 1
	d.advance(2 * time.Second)
	d.press("e")
	d.contains("e answers questions; this is a plan: a approve · r revise · d cancel")
	d.press("j") // question 1
	d.advance(2 * time.Second)
	d.press("d")
	d.contains("d denies approvals and cancels plans; this is a question: enter answer")
}

// Issue 29 item 12: an open y/n confirmation closes on any other key, as
// not decided, and says so; a y typed later decides nothing.
func TestStrayKeyClosesConfirmation(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("6", "j") // approval 2
	d.advance(2 * time.Second)
	d.press("a")
	d.contains("Approve write CHANGELOG.md?")
	d.press("x")
	d.lacks("Approve write CHANGELOG.md?")
	d.contains("not decided: x is not y, so the question was closed")
	if d.m.approvals.Capturing() {
		t.Fatal("the confirmation is still open")
	}
	d.press("y")
	d.lacks("deciding…", "✓ approved")
}

// Issue 29 item 13: esc in an answer field keeps what was typed for that
// request; opening the field again brings it back, and ctrl+c asks before
// throwing it away.
func TestEscKeepsTheDraft(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("6", "j", "j", "j") // question 1
	d.advance(2 * time.Second)
	d.press("e")
	d.typeText("keep the old name")
	d.press("esc")
	d.contains("not decided — what you typed is kept for question 1")
	d.press("k") // look at another request, and come back
	d.advance(2 * time.Second)
	d.press("j")
	d.advance(2 * time.Second)
	d.press("e")
	d.contains("› keep the old name")
	d.press("esc", "ctrl+c")
	if d.quit {
		t.Fatal("ctrl+c with a kept draft quit without asking")
	}
	d.contains("unsent text in Approvals")
	d.press("ctrl+c")
	if !d.quit {
		t.Fatal("a second ctrl+c did not quit")
	}
}

// Issue 29 item 10: scrolling the step pane pauses the timeline's following
// (the title says so), so a new step does not pull the one being read away;
// f in the step pane follows again.
func TestReadingTheStepPausesFollowing(t *testing.T) {
	d := newDriver(t, 120, 32)
	w := d.writer()
	commit := func(n int) {
		t.Helper()
		if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: n, Decision: fmt.Sprintf("step %d arrives", n), Result: "r", Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		d.refresh()
	}
	d.press("4")
	if !d.m.timeline.Following() {
		t.Fatal("the live run's timeline is not following")
	}
	d.contains("4 Step 4 ─", "1–9 of 17 lines")
	d.wheel("step 4 · 3,300 tokens", tea.MouseWheelDown)
	d.contains("paused while you read · f follows")
	d.press("f")
	d.contains("following")
	d.press("pgdown")
	d.contains("paused while you read · f follows")
	d.contains("following paused · f follows · 9–17 of 17 lines") // said where the reading is, too
	commit(5)
	d.contains("4 Step 4 ─", "1 new")
	d.press("f")
	d.contains("4 Step 5 ─", "following")
	d.lacks("paused while you read")
}

// Issue 29 item 17: a long write gets the rows the queue does not need
// (the list shrinks to two rows while the content does not fit), and enter
// opens the request whole in the pager.
func TestLongRequestGetsTheRoom(t *testing.T) {
	d := newDriver(t, 120, 32)
	var b strings.Builder
	for i := 1; i <= 48; i++ {
		fmt.Fprintf(&b, "line %d of the new file\n", i)
	}
	content := b.String()
	id, err := d.writer().PutPending(context.Background(), "4", 4, "write", "docs/long.md", &content)
	if err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.press("6")
	d.m.approvals.SelectKey(store.RequestKey{Kind: store.Approval, ID: id})
	// The list keeps two rows; the content has the rest beside the head
	// and the footer (the list had four rows, the content one).
	d.contains("1–2 of 6 requests", "1–4 of 48 lines · pgup/pgdn · enter whole", "line 4 of the new file")
	cmd := d.m.onKey(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("enter on the write opened nothing")
	}
	ready, ok := cmd().(openReadyMsg)
	if !ok || ready.err != nil {
		t.Fatalf("enter: %#v", ready)
	}
	defer os.Remove(ready.path)
	got, err := os.ReadFile(ready.path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "line 48 of the new file") || ready.what != "approval "+id {
		t.Fatalf("the pager got %q:\n%s", ready.what, got)
	}
}

// Issue 29 (smaller): when the misfire guard's pause ends, a message comes
// and the frame drawn for it shows the keys again; the hint does not wait
// for the next clock tick.
func TestGuardHintRedrawsWhenThePauseEnds(t *testing.T) {
	start := time.Now()
	d := newDriver(t, 120, 32, func(o *Options) {
		o.Now = func() time.Time { return fixture.Now.Add(time.Since(start)) }
	})
	d.wait = 3 * time.Second // long enough for the guard's timer to fire, headless
	d.press("6", "j")        // approval 2, decidable: the guard is armed
	last := ansi.Strip(strings.Join(d.m.drawn[paneApprovals].lines, "\n"))
	if strings.Contains(last, "keys paused a moment") || !strings.Contains(last, "a approve") {
		t.Fatalf("the last frame drawn still says the keys are paused:\n%s", last)
	}
}

// Issue 29 (smaller): at 60×16 a timeline row with a retry mark (↩) keeps
// its tokens and latency in line with the other rows.
func TestRetryMarkKeepsColumnsInLine(t *testing.T) {
	d := newDriver(t, 60, 16)
	d.press("2", "j", "3") // #5 worker: step 2 was retried
	right := map[string]int{}
	for _, l := range strings.Split(d.screen(), "\n") {
		for _, tok := range []string{"3.1k", "3.9k"} {
			if i := strings.Index(l, tok); i >= 0 {
				right[tok] = ansi.StringWidth(l[:i])
			}
		}
	}
	if len(right) != 2 || right["3.1k"] != right["3.9k"] {
		t.Fatalf("tokens columns at %v:\n%s", right, d.screen())
	}
}

// Issue 29 item 16: the status bar ends with the focused pane's keys, as
// many as fit, the key its "(6)" names first while requests wait; the help
// says what the bar's words mean.
func TestStatusBarHintsTheFocusedPane(t *testing.T) {
	d := newDriver(t, 200, 60)
	bar := func() string {
		l := strings.Split(d.screen(), "\n")
		return l[len(l)-1]
	}
	d.press("3")
	if b := bar(); !strings.Contains(b, "◆ 5 waiting (6)") || !strings.Contains(b, "6 requests  ↑↓ move  f follow  / search  t tool") {
		t.Fatalf("the bar with the timeline focused: %q", b)
	}
	d.press("6")
	if b := bar(); !strings.Contains(b, "a approve  d deny") || strings.Contains(b, "6 requests") {
		t.Fatalf("the bar with the queue focused: %q", b)
	}
	d.advance(2 * time.Second)
	d.press("j", "j", "j") // question 1
	d.advance(2 * time.Second)
	d.press("e") // typing an answer: no keys hinted, they are letters now
	if b := bar(); strings.Contains(b, "a approve") {
		t.Fatalf("the bar hints keys while an answer is typed: %q", b)
	}
	d.press("esc", "?")
	d.contains("push: vigil hears of each write")
}

// Issue 29 item 15: t opens a small picker of the filters the steps offer;
// esc closes it with nothing changed; a filter chosen and cleared with esc
// puts the cursor back on the step it was on.
func TestToolPicker(t *testing.T) {
	d := newDriver(t, 120, 32)
	fortySteps(d)
	d.press("3", "k", "k", "k") // step 41
	d.press("t")
	d.contains("show only:", "every step  (now)", "tool read_file", "tool spawn_agent", "tool run")
	d.press("j", "esc") // nothing chosen
	d.lacks("show only:", "only tool")
	if st, _ := d.m.timeline.Selected(); st.Number != 41 {
		t.Fatalf("esc in the picker moved the cursor to step %d", st.Number)
	}
	d.press("t", "j", "j", "enter") // tool spawn_agent
	d.contains("only tool spawn_agent", "2 of 44")
	if st, _ := d.m.timeline.Selected(); st.Number != 2 && st.Number != 3 {
		t.Fatalf("the filter put the cursor on step %d", st.Number)
	}
	d.press("esc")
	d.lacks("only tool")
	if st, _ := d.m.timeline.Selected(); st.Number != 41 {
		t.Fatalf("esc after the filter put the cursor on step %d, not back on 41", st.Number)
	}
}

// Issue 29 item 16: ":" opens a command line in the status bar with
// completion; :agent N, :run N and :store NAME jump.
func TestCommandLineJumps(t *testing.T) {
	d := newDriver(t, 200, 60)
	bar := func() string {
		l := strings.Split(d.screen(), "\n")
		return l[len(l)-1]
	}
	d.press(":")
	if b := bar(); !strings.Contains(b, ":") || !strings.Contains(b, "agent run store") || !strings.Contains(b, "tab completes") {
		t.Fatalf("the command line: %q", b)
	}
	d.typeText("ag")
	d.press("tab")
	if got := d.m.cmd.input.Value(); got != "agent " {
		t.Fatalf("tab completed %q to %q", "ag", got)
	}
	if b := bar(); !strings.Contains(b, "1 2 3 4 5 6 7") {
		t.Fatalf("the candidates: %q", b)
	}
	d.typeText("7")
	d.press("enter")
	if d.m.focus != paneAgents || d.m.tree.Selected() != "7" {
		t.Fatalf(":agent 7 focused %v with %q selected", d.m.focus, d.m.tree.Selected())
	}
	d.contains("3 Timeline · #7 grandchild")
	d.press(":")
	d.typeText("run 1")
	d.press("enter")
	if it, ok := d.m.runs.Selected(); d.m.focus != paneRuns || !ok || it.Run.ID != "1" {
		t.Fatalf(":run 1 focused %v, selected %+v", d.m.focus, it.Run.ID)
	}
	d.contains("#1 Fix the flaky parser test")
	d.press(":")
	d.typeText("store shop")
	d.press("enter")
	d.contains("one store is open: /work/shop/runs.sqlite3")
	d.press(":")
	d.typeText("run 99")
	d.press("enter")
	d.contains("no run #99 in this store")
	d.press(":", "q", "esc") // q is typed, not a quit; esc closes
	if d.quit || d.m.cmd.on {
		t.Fatalf("quit %v, command line open %v", d.quit, d.m.cmd.on)
	}
}

// Issue 29 item 12: a key the focused pane has no use for, that acts in
// another pane, says where in the status bar instead of doing nothing.
func TestKeyElsewhereSaysWhere(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("a") // the runs pane is focused
	d.contains("a decides in Approvals (6), not in Runs; w goes to the oldest waiting request")
	d.press("5", "t")
	d.contains("t picks a tool or kind of step in Timeline (3), not in Drift")
	d.press("s")
	d.contains("s sorts Runs (1), not Drift")
}

// Issue 29 item 16: with several stores open, :store NAME selects that
// store's newest run, and an id without its store's prefix that two
// stores share is named in both.
func TestCommandLineStores(t *testing.T) {
	d, _, _ := fixtureSet(t, 200, 60)
	d.press(":")
	d.typeText("store be")
	d.press("tab")
	if got := d.m.cmd.input.Value(); got != "store beta" {
		t.Fatalf("tab completed to %q", got)
	}
	d.press("enter")
	if it, ok := d.m.runs.Selected(); d.m.focus != paneRuns || !ok || it.Run.ID != "beta/4" {
		t.Fatalf(":store beta focused %v, selected %q", d.m.focus, it.Run.ID)
	}
	d.press(":")
	d.typeText("run 1")
	d.press("enter")
	d.contains("#1 is in several stores: alpha/1, beta/1")
	d.press(":")
	d.typeText("run alpha/1")
	d.press("enter")
	if it, _ := d.m.runs.Selected(); it.Run.ID != "alpha/1" {
		t.Fatalf(":run alpha/1 selected %q", it.Run.ID)
	}
}
