package textfmt

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestMemoAnswersAsMeasured: a remembered width, fit or cut is what
// measuring gives, the first time and every time after, and the memory
// stays within two generations however many strings pass.
func TestMemoAnswersAsMeasured(t *testing.T) {
	lines := []string{"● running · 字字 wide", "\x1b[1m✓ bold\x1b[m and plain", "é\u0301 combining ─────", "short ✗"}
	for round := 0; round < 3; round++ {
		for _, l := range lines {
			if got, want := Width(l), ansi.StringWidth(l); got != want {
				t.Errorf("round %d: Width(%q) = %d, want %d", round, l, got, want)
			}
			for _, w := range []int{3, 10, 40} {
				if got, want := Fit(l, w), fit(l, w); got != want {
					t.Errorf("round %d: Fit(%q, %d) = %q, want %q", round, l, w, got, want)
				}
				if got := ansi.StringWidth(Fit(l, w)); got != w {
					t.Errorf("Fit(%q, %d) is %d cells", l, w, got)
				}
				want := l
				if ansi.StringWidth(l) > w {
					want = ansi.Truncate(l, w, "…")
				}
				if got := Cut(l, w); got != want {
					t.Errorf("round %d: Cut(%q, %d) = %q, want %q", round, l, w, got, want)
				}
			}
		}
	}
	for i := 0; i < 3*memoCap; i++ {
		Width(fmt.Sprintf("● line %d", i))
	}
	widths.mu.Lock()
	n := len(widths.cur) + len(widths.old)
	widths.mu.Unlock()
	if n > 2*memoCap {
		t.Errorf("the width memo holds %d answers, more than two generations of %d", n, memoCap)
	}
	if got := Width("● line 0"); got != 8 {
		t.Errorf("a width forgotten and measured again: %d, want 8", got)
	}
}
