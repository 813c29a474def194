package tui

import (
	"testing"
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
