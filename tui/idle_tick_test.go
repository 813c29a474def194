package tui

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/views"
)

// An idle tick reads again only the rows of runs that have not ended
// (their state and duration move with the clock); an ended run's row is
// not read while nothing changed. What the ticks leave on screen is what
// a whole rebuild draws, in every order, as the clock runs past leases.
func TestIdleTickReadsOnlyRunsTheClockMoves(t *testing.T) {
	d := newDriver(t, 200, 60)
	roots := d.m.st.model.Roots()
	live := 0
	for _, id := range roots {
		if r, _ := d.m.st.model.Run(id); !r.Ended() {
			live++
		}
	}
	if live == 0 || live == len(roots) {
		t.Fatalf("the fixture needs ended and live roots: %d live of %d", live, len(roots))
	}
	for _, sort := range []views.SortKey{views.SortNewest, views.SortDuration, views.SortState} {
		for d.m.runs.Sort() != sort {
			d.press("s")
		}
		for _, step := range []time.Duration{time.Second, time.Second, 10 * time.Minute, 3 * time.Hour} {
			d.advance(step)
			before := d.m.rowReads
			d.send(tickMsg(d.clock))
			if got := d.m.rowReads - before; got != live {
				t.Errorf("sort %v, +%v: a tick read %d rows, want the %d of runs not ended (of %d)", sort, step, got, live, len(roots))
			}
			ticked := d.screen()
			d.m.refreshItems()
			if whole := d.screen(); whole != ticked {
				t.Fatalf("sort %v, +%v: the tick's screen differs from a rebuild's:\ntick:\n%s\nrebuild:\n%s", sort, step, ticked, whole)
			}
		}
	}
}
