package textfmt

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Width is how many terminal cells a (possibly styled) string takes.
func Width(s string) int { return ansi.StringWidth(s) }

// Fit cuts or pads a (possibly styled) line to exactly w cells.
func Fit(line string, w int) string {
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
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// PadRight pads a plain string to w cells (cutting it if longer).
func PadRight(s string, w int) string { return Fit(Cut(s, w), w) }

// PadLeft right-aligns a plain string in w cells.
func PadLeft(s string, w int) string {
	s = Cut(s, w)
	if d := w - ansi.StringWidth(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}
