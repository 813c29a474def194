package tui

// The layout fits what the panes hold: in the full layout the left
// column's panes (runs, agents, approvals) each ask for the rows they
// would fill, and one that needs fewer than its share gives the rest to
// the others — so four runs do not take a third of the screen while three
// requests wait in a pane that shows one. The zoom key gives the focused
// pane the whole screen, and the layout back.

// rowWanter is a pane that can say how many rows (borders included) it
// would fill.
type rowWanter interface{ WantRows() int }

// wants is the rows the left column's panes ask for.
func (m *Model) wants() [3]int {
	var out [3]int
	for i, p := range []pane{paneRuns, paneAgents, paneApprovals} {
		if w, ok := m.panes[p].(rowWanter); ok {
			out[i] = w.WantRows()
		} else {
			out[i] = 1 << 20
		}
	}
	return out
}

// refit lays the screen out again when a pane's wants changed where they
// move a pane (a store of a thousand runs adding one moves nothing).
func (m *Model) refit() {
	if m.zoomed || m.w < minWidth || m.h < minHeight {
		return
	}
	if want := m.wants(); want != m.want {
		m.want = want
		if layout(m.w, m.h, m.right, want) != m.rects {
			m.relayout()
		}
	}
}

// toggleZoom maximises the focused pane, or restores the layout.
func (m *Model) toggleZoom() {
	m.zoomed = !m.zoomed
	m.relayout()
}

// Least rows a left-column pane keeps, however little it holds.
const (
	minRunsRows      = 6
	minAgentsRows    = 5
	minApprovalsRows = 4
)

// leftColumn shares h rows among runs, agents and approvals: each starts
// from its share (2/5, then half the rest, then the rest) and keeps no
// more than it wants; what they leave goes to approvals, then agents, then
// runs, as far as each wants it, and the rest to approvals.
func leftColumn(h int, want [3]int) [3]int {
	share := [3]int{h * 2 / 5}
	share[1] = (h - share[0]) / 2
	share[2] = h - share[0] - share[1]
	floor := [3]int{minRunsRows, minAgentsRows, minApprovalsRows}
	var got [3]int
	spare := 0
	for i := range share {
		got[i] = min(share[i], max(want[i], floor[i]))
		spare += share[i] - got[i]
	}
	for _, i := range []int{2, 1, 0} {
		more := min(spare, max(want[i]-got[i], 0))
		got[i] += more
		spare -= more
	}
	got[2] += spare // nobody wants it: the queue keeps it
	return got
}

// compactLeft is the runs pane's rows in the compact layout's left column
// of h rows, the agents below it taking the rest: half each, but a pane
// that needs less gives the rest to the other.
func compactLeft(h int, want [3]int) int {
	runs := min(h/2, max(want[0], minRunsRows))
	if agents := max(want[1], minAgentsRows); agents < h-runs {
		runs = min(h-agents, max(want[0], runs)) // the agents need less: the runs may have it
	}
	return clamp(runs, minRunsRows, h-minAgentsRows)
}
