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
	return t.FrameScroll(title, note, body, w, h, focused, Scrollbar{})
}

// FrameScroll is Frame with a scroll mark on the right border beside the
// rows of a list (or text) that has more rows than fit: a thumb (┃) shows
// which part of it is on screen.
func (t *Theme) FrameScroll(title, note string, body []string, w, h int, focused bool, sb Scrollbar) string {
	if w < 4 || h < 2 {
		return ""
	}
	border := t.Border
	if focused {
		border = t.BorderFocus
	}
	inner := w - 2
	var b strings.Builder
	b.Grow(w * h * 2)

	b.WriteString(t.topEdge(title, note, w, focused))

	side := border.Render("│")
	thumb := border.Render("┃")
	from, to := sb.thumb()
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		line := ""
		if i < len(body) {
			line = body[i]
		}
		b.WriteString(side)
		b.WriteString(textfmt.Fit(line, inner))
		if i >= from && i < to {
			b.WriteString(thumb)
		} else {
			b.WriteString(side)
		}
	}
	b.WriteByte('\n')
	b.WriteString(t.bottomEdge(w, focused))
	return b.String()
}

// minTitle is how much of a title (its number and name) a note may leave.
const minTitle = 14

// Scrollbar places a scroll mark: the body rows [Top, Top+Rows) show rows
// [From, To) of Total. Nothing is drawn when everything fits.
type Scrollbar struct {
	Top, Rows       int
	From, To, Total int
}

// ListScrollbar is the mark for a list window whose rows start at body row top.
func ListScrollbar(l *List, top int) Scrollbar {
	from, to := l.Visible()
	return Scrollbar{Top: top, Rows: l.height, From: from, To: to, Total: l.n}
}

// thumb is the body rows the thumb covers (none when all rows fit).
func (s Scrollbar) thumb() (from, to int) {
	if s.Total <= 0 || s.Rows <= 0 || (s.From <= 0 && s.To >= s.Total) {
		return 0, 0
	}
	size := max(s.Rows*(s.To-s.From)/s.Total, 1)
	pos := s.Rows * s.From / s.Total
	if s.To >= s.Total {
		pos = s.Rows - size // the end shows at the end
	} else if s.From > 0 && pos == 0 {
		pos = 1 // not at the top: the thumb leaves the top free
	}
	pos = min(pos, s.Rows-size)
	if s.To < s.Total && pos+size >= s.Rows && s.Rows > size {
		pos = s.Rows - size - 1 // not at the end: the bottom stays free
	}
	return s.Top + pos, s.Top + pos + size
}

// fitNote joins notes (most important first) with " · ", leaving out the
// least important until the note fits beside the title of a frame w cells
// wide (the title cut down to minTitle if need be), where Frame would drop
// a note too long as a whole.
func fitNote(title string, w int, notes []string) string {
	headW := min(textfmt.Width(sanitize.Line(title)), minTitle) + 2
	for n := len(notes); n > 0; n-- {
		note := strings.Join(notes[:n], " · ")
		if headW+textfmt.Width(note)+2+2 <= w-2 {
			return note
		}
	}
	return ""
}

// A frame's edges are the same from frame to frame, and from session to
// session of vigil serve that draw alike (NewThemeFor shares their theme):
// measured, cut and styled once, kept in a small memo (the notes carry
// counts that move with every commit; 256 edges a generation bound it, a
// few hundred kB at most beside the explorer's own).
type edgeKey struct {
	t           *Theme
	title, note string
	w           int
	focused     bool
	bottom      bool
}

var edges = textfmt.Memo[edgeKey, string]{Cap: 256}

// topEdge is ╭─ title ───── note ─╮, w cells wide.
func (t *Theme) topEdge(title, note string, w int, focused bool) string {
	k := edgeKey{t: t, title: title, note: note, w: w, focused: focused}
	if s, ok := edges.Get(k); ok {
		return s
	}
	border, titleStyle := t.Border, t.Title
	if focused {
		border, titleStyle = t.BorderFocus, t.TitleFocus
	}
	inner := w - 2
	var b strings.Builder
	// Top edge: ╭─ title ───── note ─╮. Titles carry run goals: they are
	// never styled, so they are made safe here, whoever built them.
	head := " " + sanitize.Line(title) + " "
	tail := ""
	if note != "" {
		tail = " " + note + " "
	}
	headW, tailW := ansi.StringWidth(head), ansi.StringWidth(tail)
	// The note carries counts and badges (following, N new, scroll marks):
	// the title gives way to it down to a short stub, and only a note that
	// would leave less than that is dropped.
	if headW+tailW+2 > inner {
		if keep := inner - tailW - 3; keep >= min(headW, minTitle) {
			head = ansi.Truncate(head, keep-1, "…") + " "
			headW = ansi.StringWidth(head)
		} else {
			tail, tailW = "", 0
		}
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
	edges.Put(k, b.String())
	return b.String()
}

// bottomEdge is ╰───╯, w cells wide.
func (t *Theme) bottomEdge(w int, focused bool) string {
	k := edgeKey{t: t, w: w, focused: focused, bottom: true}
	if s, ok := edges.Get(k); ok {
		return s
	}
	border := t.Border
	if focused {
		border = t.BorderFocus
	}
	s := border.Render("╰" + strings.Repeat("─", w-2) + "╯")
	edges.Put(k, s)
	return s
}
