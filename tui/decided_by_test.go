package tui

import (
	"strings"
	"testing"
)

// The decided list names who decided what was decided in this explorer,
// from vigil's own audit log (the io-harness approval row records nobody),
// and a deny is marked ✗, not ✓.
func TestDecidedListNamesTheExplorersDecider(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("USER", "ann")
	d := newDriver(t, 200, 60)
	focusRequest(d, "approval 2")
	d.press("a", "y")
	d.contains("✓ approved: approval 2")
	focusRequest(d, "approval 3")
	d.press("d", "y")
	d.contains("denied: approval 3")
	d.press("h")
	s := d.screen()
	var row2, row3 string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.Contains(l, "approval 2  write CHANGELOG"):
			row2 = l
		case strings.Contains(l, "approval 3  exec"):
			row3 = l
		}
	}
	if !strings.Contains(row2, "✓ approval 2") || !strings.Contains(row3, "✗ approval 3") || strings.Contains(row3, "✓") {
		t.Fatalf("the decided rows are not marked by what was decided:\n%q\n%q\n%s", row2, row3, s)
	}
	d.press("g") // the first decided: the list is in the store's order
	for i := 0; i < 4 && !strings.Contains(d.screen(), "by ann@"); i++ {
		d.press("j")
	}
	d.contains("by ann@", "via the explorer")
	d.lacks("by: not recorded by this store")
}
