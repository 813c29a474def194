package views

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
)

// scrollText moves the first shown line of a text of n lines in a view of
// height rows for the keys that scroll one (a line, a page, the ends); it
// reports whether msg was one of them.
func scrollText(km keymap.KeyMap, msg tea.KeyPressMsg, offset *int, n, height int) bool {
	page := max(height-1, 1)
	switch {
	case key.Matches(msg, km.Up):
		*offset = scrolledBy(*offset, -1, n, height)
	case key.Matches(msg, km.Down):
		*offset = scrolledBy(*offset, 1, n, height)
	case key.Matches(msg, km.PageUp):
		*offset = scrolledBy(*offset, -page, n, height)
	case key.Matches(msg, km.PageDown):
		*offset = scrolledBy(*offset, page, n, height)
	case key.Matches(msg, km.Top):
		*offset = 0
	case key.Matches(msg, km.Bottom):
		*offset = max(n-height, 0)
	default:
		return false
	}
	return true
}

// scrolledBy is offset moved d lines, kept within the text.
func scrolledBy(offset, d, n, height int) int {
	return max(0, min(offset+d, n-height))
}
