package tui

import "sort"

// rect is a pane's place on screen; a pane not on screen has a zero rect.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

func (r rect) shown() bool { return r.w > 0 && r.h > 0 }

// Below this the screen says so instead of drawing garbled panes.
const (
	minWidth  = 60
	minHeight = 16
)

// Wide enough for every pane at once; below it the right column shows one
// pane at a time (the focused one, or the last right-hand pane focused).
const (
	fullWidth  = 120
	fullHeight = 32
)

// layout places the panes on a w×h screen (the status bar takes the last
// line). right is the pane shown in the right column of the compact layout.
//
// want is the rows the left column's panes (runs, agents, approvals) would
// fill: a pane that needs fewer than its share gives the rest to the
// others (fit.go).
func layout(w, h int, right pane, want [3]int) [paneCount]rect {
	h-- // status bar
	var out [paneCount]rect
	if w >= fullWidth && h >= fullHeight-1 {
		lw := clamp(w*2/5, 50, 100)
		rw := w - lw
		left := leftColumn(h, want)
		runsH, agentsH := left[0], left[1]
		out[paneRuns] = rect{0, 0, lw, runsH}
		out[paneAgents] = rect{0, runsH, lw, agentsH}
		out[paneApprovals] = rect{0, runsH + agentsH, lw, h - runsH - agentsH}
		tlH := h * 2 / 5
		stepH := (h - tlH) * 3 / 5
		out[paneTimeline] = rect{lw, 0, rw, tlH}
		out[paneStep] = rect{lw, tlH, rw, stepH}
		out[paneDrift] = rect{lw, tlH + stepH, rw, h - tlH - stepH}
		return out
	}
	lw := clamp(w*2/5, 28, 60)
	runsH := compactLeft(h, want)
	out[paneRuns] = rect{0, 0, lw, runsH}
	out[paneAgents] = rect{0, runsH, lw, h - runsH}
	out[right] = rect{lw, 0, w - lw, h}
	return out
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// relayout works out where everything goes on screen and sizes what is
// shown there. It runs when the screen is resized and when the compact
// layout's right-hand pane changes, never while drawing: keys and clicks
// always meet the geometry of the frame they act on, drawn or not.
func (m *Model) relayout() {
	m.rects, m.order = [paneCount]rect{}, m.order[:0]
	if m.w < minWidth || m.h < minHeight {
		return // the screen says it is too small; the panes keep their sizes
	}
	m.want = m.wants()
	if m.zoomed {
		m.rects = [paneCount]rect{}
		m.rects[m.focus] = rect{0, 0, m.w, m.h - 1}
	} else {
		m.rects = layout(m.w, m.h, m.right, m.want)
	}
	for p, r := range m.rects {
		if r.shown() {
			m.order = append(m.order, pane(p))
			m.panes[p].SetSize(r.w, r.h)
		}
	}
	// stitch joins each row's panes left to right.
	sort.SliceStable(m.order, func(i, j int) bool { return m.rects[m.order[i]].x < m.rects[m.order[j]].x })
	m.helpBox.SetSize(m.w, m.h-1)
	hw, hh := m.helpBox.Size()
	m.helpAt = rect{max((m.w-hw)/2, 0), max((m.h-1-hh)/2, 0), hw, hh}
	m.summary.SetSize(m.w, m.h-1)
	sw, sh := m.summary.Size()
	m.summaryAt = rect{max((m.w-sw)/2, 0), max((m.h-1-sh)/2, 0), sw, sh}
}
