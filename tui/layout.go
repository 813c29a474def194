package tui

// pane names a pane; its number key is pane+1.
type pane int

const (
	paneRuns pane = iota
	paneAgents
	paneTimeline
	paneStep
	paneDrift
	paneApprovals
	paneCount
)

// rect is a pane's place on screen.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

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
func layout(w, h int, right pane) map[pane]rect {
	h-- // status bar
	out := map[pane]rect{}
	if w >= fullWidth && h >= fullHeight-1 {
		lw := clamp(w*2/5, 50, 100)
		rw := w - lw
		runsH := h * 2 / 5
		agentsH := (h - runsH) / 2
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
	runsH := h / 2
	out[paneRuns] = rect{0, 0, lw, runsH}
	out[paneAgents] = rect{0, runsH, lw, h - runsH}
	out[right] = rect{lw, 0, w - lw, h}
	return out
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }
