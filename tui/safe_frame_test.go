package tui

import (
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// safeFrame is sanitize.Frame, whatever the rows hold and however often
// they come back, and a row that needs repairing is repaired (and counted)
// every time, not remembered as safe.
func TestSafeFrameIsFrame(t *testing.T) {
	rows := []string{"╭─ 1 Runs ─╮", "\x1b[1mbold\x1b[m row", "evil \x1b]52;c;AAAA\a clipboard", "cr\rhere", "bidi \u202e txt",
		"\x1b[38;2;1;2;3mtrue\x1b[m", "cut \x1b[1", "", "tab\there", "bad \xff utf8"}
	for round := 0; round < 3; round++ {
		for i := range rows {
			frame := strings.Join(append(append([]string{}, rows[i:]...), rows[:i]...), "\n")
			before := sanitize.Repairs()
			got := safeFrame(frame)
			repaired := sanitize.Repairs() != before
			if want := sanitize.Frame(frame); got != want {
				t.Fatalf("round %d: safeFrame(%q) = %q, sanitize.Frame gives %q", round, frame, got, want)
			}
			if !repaired {
				t.Errorf("round %d: a frame with hostile rows was not counted as repaired", round)
			}
		}
	}
	clean := "╭─ a ─╮\n│ \x1b[1mok\x1b[m │\n╰────╯"
	if got := safeFrame(clean); got != clean {
		t.Errorf("a clean frame changed: %q", got)
	}
}
