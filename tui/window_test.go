package tui

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// VIGIL_TEST_WINDOW=4 go test ./tui runs every test with the timeline held
// as a window of 4 steps: what a user sees must not depend on how much of a
// run is in memory.
func init() {
	if n, err := strconv.Atoi(os.Getenv("VIGIL_TEST_WINDOW")); err == nil && n > 0 {
		windowSteps = n
	}
}

// withWindow runs f with the timeline's window at n steps.
func withWindow(t *testing.T, n int, f func(t *testing.T)) {
	old := windowSteps
	windowSteps = n
	t.Cleanup(func() { windowSteps = old })
	f(t)
}

// The timeline's keys, search and filter over a run held as a window of a
// few steps say what they say over the run held whole: the same steps
// selected, the same "N of M", the same counts.
func TestWindowedTimelineKeys(t *testing.T) {
	for name, f := range map[string]func(*testing.T){
		"search": TestSearchTheTimeline, "filter": TestTimelineStepFilter, "follow": TestFollowModeKeepsCursor,
	} {
		t.Run(name, func(t *testing.T) { withWindow(t, 4, f) })
	}
}

// A long run is held as a window: g, G and the page keys read the steps
// they land on by range (every row drawn whole, never a placeholder once
// read), the counts are the whole run's, and while it grows live only a
// window of it is held whole.
func TestWindowedTimelineHoldsAWindow(t *testing.T) {
	withWindow(t, 8, func(t *testing.T) {
		d := newDriver(t, 120, 32)
		w := d.writer()
		const last = 404
		for n := 5; n <= last; n++ {
			rec := harness.StepRecord{Step: n, Decision: fmt.Sprintf("did thing %d", n), ToolCall: fmt.Sprintf(`run:{"cmd":"t-%d"}`, n), Result: "ok", Tokens: 7}
			if n%50 == 0 {
				rec.ToolCall = `write_file:{"path":"x"}`
			}
			if err := w.CheckpointStep(context.Background(), "4", rec); err != nil {
				t.Fatal(err)
			}
			if n%100 == 0 {
				d.refresh() // the run grows while shown
			}
		}
		d.refresh()
		d.press("3")
		a := &d.m.st.agent
		if k := d.m.windowSize(); a.Complete() || len(a.win) > 2*k || a.Len() != last {
			t.Fatalf("held whole %v, window %d steps, %d steps known; want a window of at most %d of %d", a.Complete(), len(a.win), a.Len(), 2*k, last)
		}
		d.contains(fmt.Sprintf("%d steps", last), fmt.Sprintf(" %d did thing %d", last, last))
		d.press("g")
		d.contains("   1 ", "   2 ")
		if st, ok := d.m.timeline.SelectedWhole(); !ok || st.Number != 1 {
			t.Fatalf("g: the first step is not read whole: %+v %v\n%s", st, ok, d.screen())
		}
		d.press("pgdown", "pgdown", "j")
		st, ok := d.m.timeline.SelectedWhole()
		if !ok || !strings.Contains(d.screen(), fmt.Sprintf("did thing %d", st.Number)) {
			t.Fatalf("paging down: step %d is not drawn whole:\n%s", st.Number, d.screen())
		}
		if need := d.m.timeline.Need(); len(need) > 0 {
			t.Fatalf("steps near the screen not read: %v\n%s", need, d.screen())
		}
		// The filter over the whole run, not the window.
		for i := 0; i < 10 && !strings.Contains(d.screen(), "only tool write_file"); i++ {
			d.press("t", "j", "enter") // the picker opens on the filter shown: the next one
		}
		d.contains("only tool write_file", "8 of 404", "did thing 50")
		d.press("G")
		d.contains("did thing 400")
		d.press("esc")
		// The search over the whole run: each match in turn, as it lies.
		d.press("/")
		d.typeText("thing 1")
		d.press("enter")
		d.contains("/thing 1 1 of 110") // 10–19, 100–199
		d.press("G")
		d.contains(fmt.Sprintf("%d steps", last))
		// While it grows live, only a window is held whole.
		d.press("f")
		for n := last + 1; n <= last+100; n++ {
			rec := harness.StepRecord{Step: n, Decision: fmt.Sprintf("live %d", n), Result: "ok"}
			if n%10 == 0 {
				rec.Decision = fmt.Sprintf("live thing 1 at %d", n)
			}
			if err := w.CheckpointStep(context.Background(), "4", rec); err != nil {
				t.Fatal(err)
			}
			d.refresh()
		}
		if k := d.m.windowSize(); len(a.win) > 2*k || len(a.extra) > 2*k {
			t.Fatalf("after 100 live steps the window holds %d steps whole (and %d beside it), want at most %d", len(a.win), len(a.extra), 2*k)
		}
		// The live steps are searched as they arrive: ten more matches.
		d.contains(fmt.Sprintf("live thing 1 at %d", last+96), "/thing 1 120 matches")
		if a.Len() != last+100 {
			t.Fatalf("%d steps known, want %d", a.Len(), last+100)
		}
	})
}

// A search of a run not held whole says so while it is read.
func TestWindowedSearchSaysItIsReading(t *testing.T) {
	withWindow(t, 4, func(t *testing.T) {
		d := newDriver(t, 120, 32)
		fortySteps(d)
		d.press("3", "/")
		var pending []tea.Cmd
		for _, r := range "check" {
			_, cmd := d.m.Update(keyMsg(string(r)))
			pending = append(pending, cmd)
		}
		d.contains("/check▏ searching every step…")
		for _, c := range pending {
			if c != nil {
				d.run(c)
			}
		}
		d.contains("/check▏ 40 of 40 · n/N")
	})
}
