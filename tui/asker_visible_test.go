package tui

import (
	"strings"
	"testing"

	"github.com/vigil-run/vigil/views"
)

// The approval queue keeps the asking agent on screen: in each row and in
// "asked by", the root's goal gives way, never the asker (#5 worker, #7
// grandchild), at every width.
func TestQueueShowsTheAskingAgent(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 32}, {200, 60}} {
		d := newDriver(t, size[0], size[1])
		d.press("6")
		s := d.screen()
		for _, want := range []struct{ what, asker string }{
			{"approval 2", "#5"}, {"question 1", "#7"},
		} {
			var row string
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, want.what) {
					row = l
					break
				}
			}
			if row == "" {
				t.Fatalf("%dx%d: no row for %s:\n%s", size[0], size[1], want.what, s)
			}
			if !strings.Contains(row, want.asker+" ") && !strings.Contains(row, want.asker+"…") {
				t.Errorf("%dx%d: the row of %s hides its asker %s: %q", size[0], size[1], want.what, want.asker, row)
			}
		}
		// Each request's "asked by" names its asker with its goal.
		for _, want := range []string{"#3 Rotate the deploy", "#5 worker: update", "#7 grandchild"} {
			if !d.askedBy(want) {
				t.Errorf("%dx%d: no \"asked by\" line names %q:\n%s", size[0], size[1], want, d.screen())
			}
		}
	}
}

// askedBy moves through the queue from the top until an "asked by" line
// names who (and reports whether one did).
func (d *driver) askedBy(who string) bool {
	d.press("g")
	for i := 0; i < 8; i++ {
		for _, l := range strings.Split(d.screen(), "\n") {
			if i := strings.Index(l, "asked by "); i >= 0 && strings.Contains(l[i:], who) {
				return true
			}
		}
		d.advance(2 * views.QuietFor)
		d.press("j")
	}
	return false
}
