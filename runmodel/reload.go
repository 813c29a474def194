package runmodel

import (
	"slices"
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
	for id := range m.runs {
		if reloadedPrefix(id, reloaded) {
			delete(m.runs, id)
			delete(m.leased, id)
			delete(m.statsThrough, id)
			delete(m.pendingStats, id)
		}
	}
	m.list = slices.DeleteFunc(m.list, func(r *store.Run) bool { return reloadedPrefix(r.ID, reloaded) })
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
	m.hold(&r)
	if r.Lease != nil {
		m.leased[r.ID] = true
	}
	switch {
	case r.StatsKnown: // a summary without counts leaves them to RunStats
		m.statsThrough[r.ID] = countedAll
	default:
		c.Recount = append(c.Recount, r.ID)
	}
	m.shapeStale, m.sumsStale, m.leasesStale = true, true, true
	c.Runs, c.Tree = true, true
}
