package tui

import "github.com/vigil-run/vigil/store"

// jump is where the next-waiting key came from, to go back there when it
// is pressed again on the request it jumped to.
type jump struct {
	from    pane
	fromReq store.RequestKey // the Approvals cursor before the jump
	to      store.RequestKey
}

// jumpToWaiting moves from anywhere to the oldest waiting request in the
// Approvals pane (in it, to the next one); pressed again where it landed, it goes back.
func (m *Model) jumpToWaiting() {
	a := m.approvals
	if j := m.jump; j != nil && m.focus == paneApprovals && a.Selected() == j.to && !a.ShowingDecided() {
		m.jump = nil
		a.SelectKey(j.fromReq)
		m.focusPane(j.from)
		return
	}
	from, fromReq := m.focus, a.Selected()
	// From another pane the oldest request comes first; in the queue
	// itself, w steps on to the next one.
	found := a.SelectOldestWaiting
	if m.focus == paneApprovals {
		found = a.SelectNextWaiting
	}
	if !found() {
		m.problem = "nothing waits on a human"
		return
	}
	m.problem = ""
	m.jump = &jump{from: from, fromReq: fromReq, to: a.Selected()}
	m.focusPane(paneApprovals)
}
