package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// Frame draws body inside a rounded border of exactly w×h cells, the title
// set into the top edge and an optional note at its right:
//
//	╭─ 1 Runs ─────────── 12 of 40 ─╮
//
// Each body line is cut or padded to the inner width; lines beyond the
// inner height are dropped.
func (t *Theme) Frame(title, note string, body []string, w, h int, focused bool) string {
	if w < 4 || h < 2 {
		return ""
	}
	border, titleStyle := t.Border, t.Title
	if focused {
		border, titleStyle = t.BorderFocus, t.TitleFocus
	}
	inner := w - 2
	var b strings.Builder
	b.Grow(w * h * 2)

	// Top edge: ╭─ title ───── note ─╮. Titles carry run goals: they are
	// never styled, so they are made safe here, whoever built them.
	head := " " + sanitize.Line(title) + " "
	tail := ""
	if note != "" {
		tail = " " + note + " "
	}
	headW, tailW := ansi.StringWidth(head), ansi.StringWidth(tail)
	if headW+tailW+2 > inner {
		tail, tailW = "", 0
	}
	if headW+2 > inner {
		head = ansi.Truncate(head, max(inner-2, 0), "…")
		headW = ansi.StringWidth(head)
	}
	fill := inner - 1 - headW - tailW
	b.WriteString(border.Render("╭─"))
	b.WriteString(titleStyle.Render(head))
	b.WriteString(border.Render(strings.Repeat("─", max(fill-1, 0))))
	b.WriteString(t.Muted.Render(tail))
	if fill >= 1 {
		b.WriteString(border.Render("─"))
	}
	b.WriteString(border.Render("╮"))

	side := border.Render("│")
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		line := ""
		if i < len(body) {
			line = body[i]
		}
		b.WriteString(side)
		b.WriteString(Fit(line, inner))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render("╰" + strings.Repeat("─", inner) + "╯"))
	return b.String()
}

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

// cellWidth is how many terminal cells a (possibly styled) string takes.
func cellWidth(s string) int { return ansi.StringWidth(s) }
