package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/keymap"
)

// The status bar ends with a hint of the focused pane's keys (as lazygit
// and k9s have), as many as fit after the facts, most useful first, then
// ? help. The facts come first: a hint is dropped before any of them. While
// requests wait and the focus is elsewhere, the first hint is the key the
// bar's "(6)" names.

// hintsDrawn is the last hint drawn, kept while what it is drawn from
// holds: styling each key again on every frame costs more than the rest
// of the status bar.
type hintsDrawn struct {
	focus   pane
	waiting bool
	theme   any
	out     []string
}

// paneHints is the hint for the focused pane, one drawn item per key.
func (m *Model) paneHints() []string {
	t, km := m.env.Theme, m.env.Keys
	if m.panes[m.focus].Capturing() {
		return nil // keys are letters being typed: the pane's own line says how to finish
	}
	waiting := m.focus != paneApprovals && m.st.model.Pending() > 0
	if h := m.hints; h.out != nil && h.focus == m.focus && h.waiting == waiting && h.theme == any(t) {
		return h.out
	}
	bs := km.PaneHints(int(m.focus))
	if waiting {
		bs = append([]key.Binding{keymap.Hint(km.Pane[paneApprovals], "requests")}, bs...)
	}
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		h := b.Help()
		out = append(out, t.Key.Render(h.Key)+t.Muted.Render(" "+h.Desc))
	}
	m.hints = hintsDrawn{focus: m.focus, waiting: waiting, theme: t, out: out}
	return out
}

// withHints is the right side of the bar for a gap of room: the hints that
// fit in it (at least a space apart from the facts), then help.
func (b *bar) withHints(gap int) string {
	var kept []string
	used := 0
	for _, h := range b.hints {
		hw := textfmt.Width(h) + 2 // "h  "
		if used+hw+3 > gap {       // three spaces from the facts at least
			break
		}
		kept = append(kept, h)
		used += hw
	}
	if len(kept) == 0 {
		return strings.Repeat(" ", gap) + b.help
	}
	hint := strings.Join(kept, "  ") + "  "
	return strings.Repeat(" ", gap-textfmt.Width(hint)) + hint + b.help
}
