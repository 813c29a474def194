package views

import (
	"strings"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// Long content (a step's prompt and result, a write's text, the help) is
// laid out once for a width, as text with a style role per span, and
// coloured only as its visible lines are drawn: laying out is a matter of
// geometry, so it happens when the size or the content changes, and a new
// theme needs no new layout.

// role names one of the theme's styles.
type role uint8

const (
	plain role = iota // no style at all (padding between styled spans)
	roleText
	roleMuted
	roleFaint
	roleBold
	roleHeading // a section heading, in the focused title's style
	roleKey
	roleWarning
	roleGood
	roleBad
	roleStale
)

// style is the theme's style for a role.
func (t *Theme) style(r role) Style {
	switch r {
	case roleText:
		return t.Text
	case roleMuted:
		return t.Muted
	case roleFaint:
		return t.Faint
	case roleBold:
		return t.Bold
	case roleHeading:
		return t.TitleFocus
	case roleKey:
		return t.Key
	case roleWarning:
		return t.Warning
	case roleGood:
		return t.Good
	case roleBad:
		return t.Bad
	case roleStale:
		return t.Stale
	}
	return Style{}
}

// span is text drawn in one style.
type span struct {
	role role
	text string
}

// styledLine is one laid-out line: its spans, left to right.
type styledLine []span

// one is a line of a single span.
func one(r role, text string) styledLine { return styledLine{{r, text}} }

// width is the line's width in cells.
func (l styledLine) width() int {
	n := 0
	for _, s := range l {
		n += textfmt.Width(s.text)
	}
	return n
}

// render draws the line in a theme.
func (l styledLine) render(t *Theme) string {
	if len(l) == 1 {
		return l[0].draw(t)
	}
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.draw(t))
	}
	return b.String()
}

func (s span) draw(t *Theme) string {
	if s.role == plain {
		return s.text
	}
	return t.style(s.role).Render(s.text)
}

// renderLines draws laid-out lines in a theme.
func renderLines(t *Theme, lines []styledLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.render(t)
	}
	return out
}
