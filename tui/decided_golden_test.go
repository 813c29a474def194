package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/store"
)

// The Approvals pane focused, at the three sizes, with a question decided
// elsewhere under a half-typed answer, and then its decided list.
func TestGoldenDecided(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 32}, {200, 60}} {
		t.Run(fmt.Sprintf("held-%dx%d", size[0], size[1]), func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			onRequest(t, d, question1)
			d.press("enter")
			d.typeText("keep it, CI vendors it")
			decideElsewhere(t, d.path, store.Decision{Key: question1, Text: "drop it"})
			d.refresh()
			golden.RequireEqual(t, d.screen())
		})
		t.Run(fmt.Sprintf("list-%dx%d", size[0], size[1]), func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			decideElsewhere(t, d.path, store.Decision{Key: question1, Text: "drop it"})
			decideElsewhere(t, d.path, store.Decision{Key: plan1, Verdict: store.VerdictRevise, Text: "announce first"})
			d.refresh()
			d.press("6", "h")
			golden.RequireEqual(t, d.screen())
		})
	}
}
