package textfmt

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// treeWidth's quick count is the grapheme walk's width: every rune it
// takes alone, and strings of them mixed (tree lines), measure the same.
func TestTreeWidthIsStringWidth(t *testing.T) {
	var set []rune
	for r := rune(0x20); r <= 0x7e; r++ {
		set = append(set, r)
	}
	for r := rune(0x2500); r <= 0x257f; r++ {
		set = append(set, r)
	}
	set = append(set, 0x2026, 0x22ef)
	for _, r := range set {
		if n, ok := treeWidth(string(r)); !ok || n != ansi.StringWidth(string(r)) {
			t.Errorf("%U: treeWidth %d, %t; StringWidth %d", r, n, ok, ansi.StringWidth(string(r)))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteRune(set[rng.IntN(len(set))])
		}
		s := b.String()
		if n, ok := treeWidth(s); !ok || n != ansi.StringWidth(s) || Width(s) != n {
			t.Fatalf("%q: treeWidth %d, %t; StringWidth %d", s, n, ok, ansi.StringWidth(s))
		}
	}
	// Anything else is left to the walk.
	for _, s := range []string{"└─ e\u0301", "│ 😀", "├─ \x1b[1mx", "─\u200d─", "\xff─"} {
		if _, ok := treeWidth(s); ok {
			t.Errorf("%q taken as a tree line", s)
		}
	}
}
