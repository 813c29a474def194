package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// fitSizes are the sizes the layout is held to: the smallest usual
// terminal, the README's, and a large one.
var fitSizes = [][2]int{{80, 24}, {120, 32}, {200, 60}}

// fitStates put the explorer in the states a user must be able to read at
// every size; each names the pane it focuses (at 80×24 that pane takes the
// right column, so every pane is drawn in some state).
var fitStates = []struct {
	name string
	set  func(d *driver)
}{
	// A writable approval, its misfire pause over: its keys are offered.
	{"waiting", func(d *driver) {
		d.press("6", "j")
		d.advance(2 * time.Second)
	}},
	// A deferred request: deciding is refused with the whole reason.
	{"deferred", func(d *driver) {
		d.press("6")
		d.advance(2 * time.Second)
		d.press("a")
	}},
	// A live run with 44 steps, followed as they arrive.
	{"following", func(d *driver) { fortySteps(d); d.press("3") }},
	{"step", func(d *driver) { fortySteps(d); d.press("4") }},
	{"drift", func(d *driver) { fortySteps(d); d.press("5") }},
	{"agents", func(d *driver) { d.press("2") }},
	{"help", func(d *driver) { d.press("?") }},
	{"zoomed", func(d *driver) { d.press("4", "z") }},
	{"searching", func(d *driver) { fortySteps(d); d.press("3", "/"); d.typeText("check 2"); d.press("enter", "n") }},
}

// fortySteps adds steps 5–44 to the live root, as its harness would.
func fortySteps(d *driver) {
	d.t.Helper()
	w := d.writer()
	for n := 5; n <= 44; n++ {
		rec := harness.StepRecord{Step: n, Decision: fmt.Sprintf("ran check %d", n), ToolCall: fmt.Sprintf(`run:{"cmd":"make check-%d"}`, n), Result: "ok", Tokens: 100 + int64(n)}
		if err := w.CheckpointStep(context.Background(), "4", rec); err != nil {
			d.t.Fatal(err)
		}
	}
	d.refresh()
}

func TestGoldenLayout(t *testing.T) {
	for _, size := range fitSizes {
		for _, st := range fitStates {
			t.Run(fmt.Sprintf("%dx%d/%s", size[0], size[1], st.name), func(t *testing.T) {
				d := newDriver(t, size[0], size[1])
				st.set(d)
				golden.RequireEqual(t, d.screen())
			})
		}
	}
}

// What each state must show whole, at every size, beside the goldens.
func TestLayoutShowsWhatMatters(t *testing.T) {
	reason := "cannot decide: run 3 is paused (awaiting_approval): io-harness's resume refuses a request that is already decided, so decide it through the host that resumes the run"
	for _, size := range fitSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			d.contains("? help")
			fitStates[0].set(d)
			d.contains("a approve", "d deny", "WRITE CHANGELOG.md")
			d.press("k")
			d.advance(2 * time.Second)
			d.press("a")
			if got := joined(paneText(d, paneApprovals)); !strings.Contains(got, reason) {
				t.Fatalf("the reason is not whole on screen:\n%s", d.screen())
			}
			fortySteps(d)
			d.press("3")
			d.contains("following", "44 steps", "  44 ran check 44")
			d.contains("┃") // the timeline's scroll mark
		})
	}
}

// paneText is the part of the screen a pane covers.
func paneText(d *driver, p pane) string {
	r := d.m.rects[p]
	lines := strings.Split(d.screen(), "\n")
	var out []string
	for y := r.y; y < r.y+r.h && y < len(lines); y++ {
		out = append(out, ansi.Cut(lines[y], r.x, r.x+r.w))
	}
	return strings.Join(out, "\n")
}

// joined is the screen's text with each pane's wrapped lines run together:
// every run of border, padding and line break becomes one space.
func joined(screen string) string {
	var words []string
	for _, f := range strings.FieldsFunc(screen, func(r rune) bool {
		return strings.ContainsRune(" \n│┃╭╮╰╯─", r)
	}) {
		words = append(words, f)
	}
	return strings.Join(words, " ")
}

// The zoom key gives the focused pane the whole screen and gives it back;
// the zoom follows the focus.
func TestZoomKey(t *testing.T) {
	d := newDriver(t, 120, 32)
	d.press("6")
	d.contains("1 Runs", "1–4 of 5 requests")
	d.press("z")
	d.lacks("1 Runs", "2 Agents", "of 5 requests")
	d.contains("6 Approvals", "zoomed (z restores)", "approval 3  exec")
	if r := d.m.rects[paneApprovals]; r.w != 120 || r.h != 31 {
		t.Fatalf("the zoomed queue is %dx%d, want 120x31", r.w, r.h)
	}
	d.press("3")
	d.contains("3 Timeline")
	d.lacks("6 Approvals", "1 Runs")
	d.press("z")
	d.contains("1 Runs", "2 Agents", "3 Timeline")
	d.lacks("zoomed")
}

// The help overlay fits a 60×16 screen and scrolls to its last line.
func TestHelpScrollsOnASmallScreen(t *testing.T) {
	d := newDriver(t, 60, 16)
	d.press("?")
	d.contains("Help · keys", "1–13 of ")
	d.lacks("press ?, q or esc to close")
	d.press("G")
	d.contains("press ?, q or esc to close", "wheel to scroll.") // the note wraps inside the box, whole
	found := false
	for _, l := range strings.Split(d.screen(), "\n") {
		if !strings.Contains(l, "Status bar:") {
			continue
		}
		found = true
		// The help's box ends its line, then the pane beneath it does.
		if inner := strings.TrimRight(l, " "); !strings.HasSuffix(inner, "│") && !strings.HasSuffix(inner, "┃") { // the box's border, alone or beside a pane's
			t.Fatalf("a help line runs past its box: %q", l)
		}
	}
	if !found {
		t.Fatalf("the help's last lines are not on screen:\n%s", d.screen())
	}
	d.press("g")
	d.contains("1–13 of ")
	d.press("?")
	d.lacks("Help · keys")
}

// The left column: a pane that needs less than its share gives the rest
// away — to the queue first, then the agents, then the runs.
func TestLeftColumnShares(t *testing.T) {
	for _, c := range []struct {
		h    int
		want [3]int
		got  [3]int
	}{
		{31, [3]int{7, 9, 1 << 20}, [3]int{7, 9, 15}},        // few runs and agents, requests waiting
		{31, [3]int{40, 40, 4}, [3]int{12, 15, 4}},           // nothing waits: the agents take the rest
		{31, [3]int{40, 5, 4}, [3]int{22, 5, 4}},             // then the runs
		{31, [3]int{2, 2, 2}, [3]int{6, 5, 20}},              // nobody wants it: the queue keeps it
		{59, [3]int{9, 1 << 20, 1 << 20}, [3]int{9, 18, 32}}, // the agents keep their share; what the runs leave goes to the queue
	} {
		got := leftColumn(c.h, c.want)
		if got != c.got || got[0]+got[1]+got[2] != c.h {
			t.Errorf("leftColumn(%d, %v) = %v, want %v", c.h, c.want, got, c.got)
		}
	}
}

// The compact layout's left column: the runs pane keeps the rows its runs
// fill, the agents the rest, each keeping a few.
func TestCompactLeftShares(t *testing.T) {
	for _, c := range []struct {
		h    int
		want [3]int
		runs int
	}{
		{23, [3]int{7, 8, 1 << 20}, 7},    // few runs: the agents get the rest
		{23, [3]int{40, 40, 1 << 20}, 11}, // both full: half each
		{23, [3]int{40, 5, 1 << 20}, 18},  // few agents: the runs get the rest
		{23, [3]int{2, 2, 1 << 20}, 6},    // nobody wants it: the agents keep it
	} {
		if got := compactLeft(c.h, c.want); got != c.runs {
			t.Errorf("compactLeft(%d, %v) = %d, want %d", c.h, c.want, got, c.runs)
		}
	}
}

// At 80×24 the status bar gives the store's name up before the reason the
// picture is not current: it is read whole, and ? help stays.
func TestStatusBarKeepsTheReason(t *testing.T) {
	d := newDriver(t, 80, 24)
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.m.markStale(staleGone, "store gone: runs.sqlite3 was removed")
	bar := d.m.statusBar(80)
	plain := ansi.Strip(bar)
	if !strings.Contains(plain, "NOT CURRENT: store gone: runs.sqlite3 was removed") || !strings.HasSuffix(strings.TrimRight(plain, " "), "? help") {
		t.Fatalf("the status bar cut the reason or the help key: %q", plain)
	}
	if strings.Contains(plain, "runs.sqlite3 ·") {
		t.Fatalf("the store's name kept its place over the reason: %q", plain)
	}
	// With room, every fact is there.
	if plain := ansi.Strip(d.m.statusBar(200)); !strings.Contains(plain, "runs.sqlite3 · ◆ #4 as last read · NOT CURRENT (as of 1m ago): store gone") ||
		!strings.Contains(plain, "◆ 5 waiting (6)") {
		t.Fatalf("at 200 columns the status bar left out a fact: %q", plain)
	}
}
