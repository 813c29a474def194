package views

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
)

// List is a cursor over n rows shown through a window of height rows. It
// holds no rows itself, so a pane of a hundred thousand steps renders only
// the ones on screen.
type List struct {
	Cursor int
	Offset int
	n      int
	height int
}

// SetLen tells the list how many rows there are, keeping the cursor in range.
func (l *List) SetLen(n int) {
	l.n = n
	l.clamp()
}

// Len is the number of rows.
func (l *List) Len() int { return l.n }

// SetHeight sets the window height, keeping the cursor visible.
func (l *List) SetHeight(h int) {
	l.height = max(h, 1)
	l.clamp()
}

// Move moves the cursor by d rows.
func (l *List) Move(d int) {
	l.Cursor += d
	l.clamp()
}

// Page moves by a window's height.
func (l *List) Page(d int) { l.Move(d * max(l.height-1, 1)) }

// Top moves to the first row.
func (l *List) Top() { l.Cursor = 0; l.clamp() }

// Bottom moves to the last row.
func (l *List) Bottom() { l.Cursor = l.n - 1; l.clamp() }

// AtBottom reports whether the cursor is on the last row.
func (l *List) AtBottom() bool { return l.n == 0 || l.Cursor >= l.n-1 }

// Select puts the cursor on row i.
func (l *List) Select(i int) {
	l.Cursor = i
	l.clamp()
}

// SelectVisible puts the cursor on the y-th row of the window (a click),
// reporting false when y falls outside the rows shown.
func (l *List) SelectVisible(y int) bool {
	from, to := l.Visible()
	if y < 0 || from+y >= to {
		return false
	}
	l.Select(from + y)
	return true
}

// Visible is the range of rows in the window: [from, to).
func (l *List) Visible() (from, to int) {
	return l.Offset, min(l.Offset+l.height, l.n)
}

// Scroll moves the window without moving the cursor off screen (mouse wheel).
func (l *List) Scroll(d int) {
	l.Offset = max(0, min(l.Offset+d, l.n-l.height))
	if l.Cursor < l.Offset {
		l.Cursor = l.Offset
	}
	if l.Cursor >= l.Offset+l.height {
		l.Cursor = l.Offset + l.height - 1
	}
	l.clamp()
}

func (l *List) clamp() {
	if l.height < 1 {
		l.height = 1
	}
	if l.Cursor >= l.n {
		l.Cursor = l.n - 1
	}
	if l.Cursor < 0 {
		l.Cursor = 0
	}
	if l.Cursor < l.Offset {
		l.Offset = l.Cursor
	}
	if l.Cursor >= l.Offset+l.height {
		l.Offset = l.Cursor - l.height + 1
	}
	if l.Offset > max(l.n-l.height, 0) {
		l.Offset = max(l.n-l.height, 0)
	}
	if l.Offset < 0 {
		l.Offset = 0
	}
}

// moveList applies the movement keys shared by every list pane.
func moveList(l *List, msg tea.KeyPressMsg, km keymap.KeyMap) bool {
	switch {
	case key.Matches(msg, km.Up):
		l.Move(-1)
	case key.Matches(msg, km.Down):
		l.Move(1)
	case key.Matches(msg, km.Top):
		l.Top()
	case key.Matches(msg, km.Bottom):
		l.Bottom()
	case key.Matches(msg, km.PageUp):
		l.Page(-1)
	case key.Matches(msg, km.PageDown):
		l.Page(1)
	default:
		return false
	}
	return true
}
