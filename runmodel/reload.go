package runmodel

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// A set of stores (store/union) loads one store again alone when it comes
// back under a cursor it cannot resume: its prefix comes in
// Changes.Reloaded, with its runs and undecided requests whole. The model
// drops what it held of that store and takes those as a load would; the
// other stores' runs are not touched.

// reloadedPrefix is the store prefix of an id of a set ("b" of "b/42") when
// that store is among those reloaded.
func reloadedPrefix(id string, reloaded map[string]bool) bool {
	p, _, ok := strings.Cut(id, "/")
	return ok && reloaded[p]
}

// dropStores forgets every run and request of the stores reloaded.
func (m *Model) dropStores(reloaded map[string]bool) {
	// The slots left are renumbered in their order, so a store reloaded
	// again and again leaves no empty slots behind.
	ids := make(map[string]int32, len(m.ids))
	slots, through := m.slots[:0], m.through[:0]
	for s, r := range m.slots {
		if r == nil {
			continue
		}
		if reloadedPrefix(r.ID, reloaded) {
			delete(m.leased, r.ID)
			delete(m.pendingStats, r.ID)
			continue
		}
		ids[r.ID] = int32(len(slots))
		slots, through = append(slots, r), append(through, m.through[s])
	}
	clear(m.slots[len(slots):]) // no dropped run kept alive past the end
	m.ids, m.slots, m.through = ids, slots, through
	for k := range m.requests {
		if reloadedPrefix(k.ID, reloaded) {
			delete(m.requests, k)
		}
	}
	m.shapeStale, m.sumsStale, m.leasesStale = true, true, true
}

// loadRun takes a run of a reloaded store as SetRuns takes one; a run
// whose counts its row leaves unknown is to be counted (Changed.Recount).
func (m *Model) loadRun(r store.Run, c *Changed) {
	s := m.hold(&r)
	if r.Lease != nil {
		m.leased[r.ID] = true
	}
	switch {
	case r.StatsKnown: // a summary without counts leaves them to RunStats
		m.through[s] = countedAll
	default:
		c.Recount = append(c.Recount, r.ID)
	}
	m.shapeStale, m.sumsStale, m.leasesStale = true, true, true
	c.Runs, c.Tree = true, true
}
