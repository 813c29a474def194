package tui

import (
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// itemsBuilt is what the run list's items were last built from
// (refreshItems), so the clock tick can tell whether anything but the
// clock moved since.
type itemsBuilt struct {
	model *runmodel.Model
	rev   uint64
	// clocked are the items whose state or duration the clock moves: those
	// of runs that have not ended (an ended run is finished, its duration
	// its summary's, whatever the time).
	clocked []int32
}

// onClock brings the lists up to the clock on its tick. The run list is
// rebuilt only when the model or a store's reachability moved since it
// was built (counts held back, a store gone); otherwise only the rows of
// runs that have not ended are read again: an idle explorer on a large
// store does no work per run each second.
func (m *Model) onClock() {
	md := m.st.model
	set, _ := m.src.Source.(store.StoreSet)
	if b := &m.built; b.model != md || b.rev != md.Rev() || offlineStores(set) != m.itemsOffline {
		m.refreshItems()
		return
	}
	now := m.now()
	moved, states := false, false
	for _, k := range m.built.clocked {
		it := &m.runItems[k]
		rd, _ := md.Read(it.Run.ID, now)
		m.rowReads++
		if rd.State != it.State {
			states = true
		}
		if rd.State != it.State || rd.Duration != it.Duration {
			it.State, it.Duration = rd.State, rd.Duration
			moved = true
		}
	}
	if moved {
		m.runs.ClockMoved(states)
	}
	m.refreshTree()
	m.refreshApprovals()
	m.showSummary() // its state, lease and ages move with the clock too
}
