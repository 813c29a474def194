package views

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
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
		b.WriteString(textfmt.Fit(line, inner))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Render("╰" + strings.Repeat("─", inner) + "╯"))
	return b.String()
}

// fitNote joins notes (most important first) with " · ", leaving out the
// least important until the note fits beside the title of a frame w cells
// wide, where Frame would drop a note too long as a whole.
func fitNote(title string, w int, notes []string) string {
	headW := textfmt.Width(sanitize.Line(title)) + 2
	for n := len(notes); n > 0; n-- {
		note := strings.Join(notes[:n], " · ")
		if headW+textfmt.Width(note)+2+2 <= w-2 {
			return note
		}
	}
	return ""
}
