package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Whole frames at the three sizes that matter: the smallest usual
// terminal, a roomy one, and a very large one.
func TestGoldenScreens(t *testing.T) {
	for _, size := range fitSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			golden.RequireEqual(t, d.screen())
		})
	}
}

// Each pane, focused, at a fixed size: the panes as a user meets them.
func TestGoldenPanes(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3") // the timeline is focused, the live root's last step selected
	panes := map[string]func() string{
		"runs":      func() string { return d.m.RenderPane(int(paneRuns), 90, 10) },
		"agents":    func() string { return d.m.RenderPane(int(paneAgents), 72, 9) },
		"timeline":  func() string { return d.m.RenderPane(int(paneTimeline), 100, 8) },
		"step":      func() string { return d.m.RenderPane(int(paneStep), 80, 24) },
		"drift":     func() string { return d.m.RenderPane(int(paneDrift), 96, 10) },
		"approvals": func() string { return d.m.RenderPane(int(paneApprovals), 90, 24) },
	}
	for name, view := range panes {
		t.Run(name, func(t *testing.T) {
			golden.RequireEqual(t, ansi.Strip(view()))
		})
	}
}

func TestTooSmall(t *testing.T) {
	d := newDriver(t, 50, 12)
	d.contains("vigil needs at least 60×16; this terminal is 50×12")
}

func TestNavigateByKeys(t *testing.T) {
	d := newDriver(t, 120, 40)
	if d.m.focus != paneRuns {
		t.Fatalf("starts focused on %v", d.m.focus)
	}
	// The newest live run is open; its tree and root timeline are shown.
	d.contains("#4 Coordinate the v2.0 release", "#7 grandchild", "spawn refused (agents) · step 3",
		"budget 177k/200k left")
	d.press("tab", "tab")
	if d.m.focus != paneTimeline {
		t.Fatalf("tab tab → %v", d.m.focus)
	}
	d.press("shift+tab")
	if d.m.focus != paneAgents {
		t.Fatalf("shift+tab → %v", d.m.focus)
	}
	// Down to the changelog worker: its timeline loads, retries folded.
	d.press("j")
	d.contains("3 Timeline · #5 worker: update CH" /* the title gives way to its badges */, "↩1")
	// Open the finished parser run from the runs pane.
	d.press("1", "G", "enter")
	if d.m.focus != paneAgents {
		t.Fatalf("enter on a run focuses the agents pane, got %v", d.m.focus)
	}
	d.contains("#1 Fix the flaky parser test", "ran go test ./... (exit 0)")
	d.press("esc")
	if d.m.focus != paneRuns {
		t.Fatalf("esc from agents → %v", d.m.focus)
	}
	d.press("5")
	if d.m.focus != paneDrift {
		t.Fatalf("5 → %v", d.m.focus)
	}
	d.press("q")
	if !d.quit {
		t.Fatal("q did not quit")
	}
}

func TestFilterAndSortRuns(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("/")
	d.typeText("ci image")
	d.contains("1 of 4", "Upgrade the CI image")
	d.lacks("Fix the flaky")
	d.press("enter")
	d.contains("filter: ci image")
	d.press("esc")
	d.contains("4 runs", "Fix the flaky")
	// Filter by status word.
	d.press("/")
	d.typeText("paused")
	d.contains("1 of 4", "Rotate the deploy keys")
	d.press("esc")
	d.press("s", "s") // oldest → tokens
	d.contains("4 runs · tokens")
	rows := runRows(d.screen())
	if len(rows) < 2 || !strings.Contains(rows[0], "#4") {
		t.Fatalf("sorted by tokens, #4 (27k) should lead: %q", rows)
	}
}

// runRows are the runs pane's data rows, in screen order.
func runRows(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "│"); i >= 0 && strings.Contains(l, " #") && strings.Count(l, "│") >= 2 {
			cell := strings.SplitN(l[i+len("│"):], "│", 2)[0]
			if strings.Contains(cell, "#") {
				out = append(out, cell)
			}
		}
		if strings.Contains(l, "2 Agents") {
			break
		}
	}
	return out
}

// Text from the store cannot reach the terminal as control sequences.
func TestStoreTextIsSanitized(t *testing.T) {
	d := newDriver(t, 160, 45)
	d.press("2", "j", "3", "k") // the changelog worker's step 2 has ESC in it
	raw := d.m.Render()
	if strings.Contains(raw, "\x1b]") || strings.Contains(raw, "\x07") {
		t.Fatal("an OSC sequence from the store reached the frame")
	}
	if !sanitize.Safe(ansi.Strip(raw)) {
		t.Fatal("control characters in the frame")
	}
	d.contains("␛]0;pwned␇", "␛[31mRED␛[0m")
}

func TestFollowModeKeepsCursor(t *testing.T) {
	d := newDriver(t, 120, 40)
	w := d.writer()
	ctx := context.Background()
	d.press("3")
	if !d.m.timeline.Following() {
		t.Fatal("a live run's timeline does not start in follow mode")
	}
	commit := func(n int) {
		if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: n, Decision: fmt.Sprintf("step %d arrives", n), Result: "r", Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		d.refresh()
	}
	commit(5)
	if st, _ := d.m.timeline.Selected(); st.Number != 5 {
		t.Fatalf("following, the cursor is on step %d, want 5", st.Number)
	}
	d.press("k", "k") // moving turns follow off
	if d.m.timeline.Following() {
		t.Fatal("follow still on after moving")
	}
	sel, _ := d.m.timeline.Selected()
	commit(6)
	commit(7)
	if now, _ := d.m.timeline.Selected(); now.RowID != sel.RowID {
		t.Fatalf("the cursor jumped from step %d to %d when rows arrived", sel.Number, now.Number)
	}
	d.contains("2 new")
	d.press("f")
	if st, _ := d.m.timeline.Selected(); st.Number != 7 || !d.m.timeline.Following() {
		t.Fatalf("f should follow again and jump to step 7, at %d", st.Number)
	}
	d.lacks("2 new")
}

func TestApproveWithGuardAndConfirmation(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("6")
	// Select the CHANGELOG write (the deferred keys write is first).
	d.press("j")
	d.contains("WRITE CHANGELOG.md", "## v2.0.0")
	// Keys right after the request came into view are ignored.
	d.press("a")
	d.contains("keys paused a moment")
	if d.m.approvals.Capturing() {
		t.Fatal("a key inside the quiet period opened a confirmation")
	}
	d.advance(500 * time.Millisecond)
	d.press("a")
	d.contains("Approve write CHANGELOG.md?", "y yes")
	d.press("n")
	d.contains("not decided")
	d.press("a", "y")
	d.contains("✓ approved: approval 2")
	req := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Approval, ID: "2"})
	if !req.Resolved || req.Decision != string(store.VerdictApprove) {
		t.Fatalf("the store holds %+v", req)
	}
	d.lacks("approval 2  write")
}

func TestLostRaceSaysWhoWon(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("6")
	selectRequest(d, "approval 2")
	d.advance(time.Second)
	d.press("d")
	d.contains("Deny write CHANGELOG.md?")
	// Someone else decides first, before the y lands.
	other, err := ioharness.Open(d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if r, err := other.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "2"}, Verdict: store.VerdictApprove}); err != nil || !r.Won {
		t.Fatal(r, err)
	}
	d.press("y")
	d.contains("✗ lost the race: approval 2 was already approved")
	req := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Approval, ID: "2"})
	if req.Decision != string(store.VerdictApprove) {
		t.Fatalf("the losing deny overwrote the row: %+v", req)
	}
}

func TestPausedRequestIsNotWritable(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("6") // the deferred keys write of paused run 3
	d.contains("WRITE keys/deploy.pub", "run 3 is paused (awaiting_approval)")
	d.advance(time.Second)
	d.press("a")
	d.contains("cannot decide: run 3 is paused")
	if r := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Approval, ID: "1"}); r.Resolved {
		t.Fatal("a deferred request was written")
	}
}

func TestAnswerQuestionAndRevisePlan(t *testing.T) {
	d := newDriver(t, 120, 40)
	focusRequest(d, "question 1")
	d.press("enter")
	d.typeText("2")
	d.press("enter")
	d.contains("✓ answered: question 1")
	q := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Question, ID: "1"})
	if q.Decision != "drop it" || q.DecidedBy != "attached" {
		t.Fatalf("question row = %+v", q)
	}
	selectRequest(d, "plan 1")
	d.advance(time.Second)
	d.press("r")
	d.typeText("tag after the notes are out")
	d.press("enter")
	d.contains("✓ sent back for revision: plan 1")
	p := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Plan, ID: "1"})
	if p.Decision != string(store.VerdictRevise) || p.Correction != "tag after the notes are out" {
		t.Fatalf("plan row = %+v", p)
	}
}

// focusRequest focuses the queue, moves onto a request and waits out the
// misfire guard, so the next key decides it.
func focusRequest(d *driver, want string) {
	d.t.Helper()
	d.press("6")
	d.advance(time.Second)
	selectRequest(d, want)
	d.advance(time.Second)
}

// selectRequest moves the queue's cursor onto a request.
func selectRequest(d *driver, want string) {
	d.t.Helper()
	d.press("g")
	for i := 0; i < 10; i++ {
		if selectedRequest(d) == want {
			return
		}
		d.press("j")
	}
	d.t.Fatalf("no %s in the queue", want)
}

func selectedRequest(d *driver) string {
	if it, ok := d.m.approvals.Current(); ok {
		return it.Req.Key().String()
	}
	return ""
}

func TestReadOnlyDisablesDeciding(t *testing.T) {
	d := newDriver(t, 120, 40, func(o *Options) {
		ro, err := ioharness.OpenReadOnly(o.Source.Path())
		if err != nil {
			t.Fatal(err)
		}
		o.Source.Close()
		o.Source = ro
	})
	d.contains("read-only")
	d.press("6", "j")
	d.advance(time.Second)
	d.press("a")
	d.contains("cannot decide: opened read-only")
}

func mustRequest(t *testing.T, src store.Source, k store.RequestKey) store.Request {
	t.Helper()
	reqs, err := src.Requests(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Key() == k {
			return r
		}
	}
	t.Fatalf("no %s", k)
	return store.Request{}
}
