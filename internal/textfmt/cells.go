package textfmt

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Width is how many terminal cells a (possibly styled) string takes.
func Width(s string) int {
	if plainASCII(s) {
		return len(s) // one cell a byte: most of what a table holds
	}
	if n, ok := treeWidth(s); ok {
		return n
	}
	if len(s) < memoMin {
		return ansi.StringWidth(s)
	}
	if n, ok := widths.Get(s); ok {
		return n
	}
	n := ansi.StringWidth(s)
	widths.Put(s, n)
	return n
}

// plainASCII reports printable ASCII only (no escape sequence, no
// control): a byte is a cell.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// treeWidth measures printable ASCII with box drawing (U+2500–U+257F)
// and the ellipses (U+2026, U+22EF) that tree lines are drawn with: each
// is one cell and none joins a neighbour into one grapheme, so the width
// is the count of runes (a 100 k-agent tree's lines went through the
// grapheme walk one by one: most of writing them). ok is false for
// anything else.
func treeWidth(s string) (n int, ok bool) {
	for _, r := range s {
		switch {
		case r >= 0x20 && r <= 0x7e, r >= 0x2500 && r <= 0x257f, r == 0x2026, r == 0x22ef:
			n++
		default:
			return 0, false
		}
	}
	return n, true
}

// Fit cuts or pads a (possibly styled) line to exactly w cells.
func Fit(line string, w int) string {
	if plainASCII(line) {
		switch {
		case len(line) > w:
			return Cut(line, w)
		case len(line) < w:
			return line + strings.Repeat(" ", w-len(line))
		}
		return line
	}
	k := sized{line, w}
	if f, ok := fits.Get(k); ok {
		return f
	}
	f := fit(line, w)
	fits.Put(k, f)
	return f
}

func fit(line string, w int) string {
	lw := ansi.StringWidth(line)
	if lw > w {
		line = ansi.Truncate(line, w, "…")
		lw = ansi.StringWidth(line)
	}
	if lw < w {
		line += strings.Repeat(" ", w-lw)
	}
	return line
}

// Cut shortens a plain (unstyled) string to w cells with an ellipsis.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if plainASCII(s) {
		if len(s) <= w {
			return s
		}
		return s[:w-1] + "…"
	}
	k := sized{s, w}
	if c, ok := cuts.Get(k); ok {
		return c
	}
	c := s
	if ansi.StringWidth(s) > w {
		c = ansi.Truncate(s, w, "…")
	}
	cuts.Put(k, c)
	return c
}

// PadRight pads a plain string to w cells (cutting it if longer).
func PadRight(s string, w int) string { return Fit(Cut(s, w), w) }

// PadLeft right-aligns a plain string in w cells.
func PadLeft(s string, w int) string {
	s = Cut(s, w)
	if d := w - Width(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}
