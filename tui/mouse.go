package tui

import (
	tea "charm.land/bubbletea/v2"
)

// wheelStep is how many rows one notch of the wheel scrolls.
const wheelStep = 3

// paneAt is the pane under a screen cell, by the layout worked out when
// the screen was last sized.
func (m *Model) paneAt(x, y int) (pane, rect, bool) {
	for _, p := range m.order {
		if r := m.rects[p]; r.contains(x, y) {
			return p, r, true
		}
	}
	return 0, rect{}, false
}

// onClick focuses the pane under the pointer and hands it the click, in
// the pane's own coordinates.
func (m *Model) onClick(ms tea.Mouse) tea.Cmd {
	if m.help || m.summaryOn {
		m.help = false
		m.closeSummary()
		return nil
	}
	p, r, ok := m.paneAt(ms.X, ms.Y)
	if !ok || ms.Button != tea.MouseLeft {
		return nil
	}
	m.focusPane(p)
	return m.act(m.panes[p].Click(ms.X-r.x, ms.Y-r.y))
}

// onWheel scrolls the pane under the pointer, focused or not.
func (m *Model) onWheel(ms tea.Mouse) tea.Cmd {
	if m.help {
		switch ms.Button {
		case tea.MouseWheelUp:
			m.helpBox.Wheel(-wheelStep)
		case tea.MouseWheelDown:
			m.helpBox.Wheel(wheelStep)
		}
		return nil
	}
	if m.summaryOn {
		switch ms.Button {
		case tea.MouseWheelUp:
			m.summary.Wheel(-wheelStep)
		case tea.MouseWheelDown:
			m.summary.Wheel(wheelStep)
		}
		return nil
	}
	p, _, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return nil
	}
	if p == paneStep {
		defer m.readStep(m.detail.Offset()) // reading.go
	}
	switch ms.Button {
	case tea.MouseWheelUp:
		return m.act(m.panes[p].Wheel(-wheelStep))
	case tea.MouseWheelDown:
		return m.act(m.panes[p].Wheel(wheelStep))
	}
	return nil
}
