package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/views"
)

// paneAt is the pane under a screen cell.
func (m *Model) paneAt(x, y int) (pane, rect, bool) {
	for p, r := range m.rects {
		if r.contains(x, y) {
			return p, r, true
		}
	}
	return 0, rect{}, false
}

// onClick focuses the pane under the pointer and selects the row clicked.
func (m *Model) onClick(ms tea.Mouse) tea.Cmd {
	if m.help {
		m.help = false
		return nil
	}
	p, r, ok := m.paneAt(ms.X, ms.Y)
	if !ok || ms.Button != tea.MouseLeft {
		return nil
	}
	m.focusPane(p)
	row := ms.Y - r.y - 1 // below the top border
	var in views.Intent
	switch p {
	case paneRuns:
		in = m.runs.Click(row - 1) // a header row
	case paneAgents:
		in = m.tree.Click(row)
	case paneTimeline:
		in = m.timeline.Click(row)
	case paneApprovals:
		in = m.approvals.Click(row, m.now())
	}
	return m.act(in)
}

// onWheel scrolls the pane under the pointer.
func (m *Model) onWheel(ms tea.Mouse) tea.Cmd {
	p, _, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return nil
	}
	d := 3
	switch ms.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
	default:
		return nil
	}
	switch p {
	case paneRuns:
		m.runs.Scroll(d)
	case paneAgents:
		m.tree.Scroll(d)
	case paneTimeline:
		return m.act(m.timeline.Scroll(d))
	case paneStep:
		m.detail.Scroll(d)
	case paneDrift:
		m.drift.Scroll(d)
	case paneApprovals:
		m.approvals.Scroll(d)
	}
	return nil
}
