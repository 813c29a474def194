package views

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// Style is a theme's lipgloss style with a short cut for what the panes
// draw most: one line of text in colours and attributes only. lipgloss
// measures, pads, aligns, borders and margins every string it renders,
// whatever the style sets, and a frame renders hundreds of spans: for a
// style that sets none of that, a line's rendering is its text between the
// style's own opening and closing sequences, worked out once here. Anything
// else (a newline, a tab, a carriage return; a style with a size, padding,
// borders, underlined or struck-through spaces) goes to lipgloss as ever,
// so the output is byte for byte lipgloss's (TestStyleMatchesLipgloss).
type Style struct {
	lipgloss.Style
	pre, post string
	fast      bool
	// What the long way rendered, by text: a frame renders most of the
	// same lines again.
	slow *textfmt.Memo[string, string]
}

// styleOf wraps a lipgloss style, finding its opening and closing
// sequences when the short cut gives exactly what lipgloss would.
func styleOf(s lipgloss.Style) Style {
	st := Style{Style: s, slow: &textfmt.Memo[string, string]{}}
	if !shortCutSafe(s) {
		return st
	}
	const probe = "x"
	out := s.Render(probe)
	i := strings.Index(out, probe)
	if i < 0 {
		return st
	}
	pre, post := out[:i], out[i+len(probe):]
	// The same bytes around text with spaces, wide and combining runes, an
	// escape sequence and nothing at all, or no short cut.
	for _, p := range []string{"", "a b", " x ", "é字\u0301", "\x1b[1mz\x1b[m", "…│"} {
		if s.Render(p) != pre+p+post {
			return st
		}
	}
	st.pre, st.post, st.fast, st.slow = pre, post, true, nil
	return st
}

// shortCutSafe: the style sets nothing that makes lipgloss's output depend
// on the text beyond wrapping it.
func shortCutSafe(s lipgloss.Style) bool {
	t, r, b, l := s.GetPadding()
	mt, mr, mb, ml := s.GetMargin()
	return s.GetWidth() == 0 && s.GetHeight() == 0 && s.GetMaxWidth() == 0 && s.GetMaxHeight() == 0 &&
		t+r+b+l+mt+mr+mb+ml == 0 && !s.GetInline() && s.GetTransform() == nil &&
		s.GetHorizontalBorderSize() == 0 && s.GetVerticalBorderSize() == 0 &&
		!s.GetUnderline() && !s.GetStrikethrough() && !s.GetUnderlineSpaces() && !s.GetStrikethroughSpaces()
}

// Render is lipgloss's Render, short-cut for a single line.
func (s Style) Render(strs ...string) string {
	if s.fast && len(strs) == 1 && strings.IndexAny(strs[0], "\n\t\r") < 0 {
		if s.pre == "" && s.post == "" {
			return strs[0]
		}
		return s.pre + strs[0] + s.post
	}
	if s.slow == nil || len(strs) != 1 {
		return s.Style.Render(strs...)
	}
	if out, ok := s.slow.Get(strs[0]); ok {
		return out
	}
	out := s.Style.Render(strs[0])
	s.slow.Put(strs[0], out)
	return out
}
