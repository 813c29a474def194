package runmodel

import (
	"time"

	"github.com/vigil-run/vigil/store"
)

// Reading is everything a list row shows of one run, told against one
// clock: what State, Agent, Tree, Agents, Waiting, TreeWaiting and
// Duration say, found with one look-up instead of one each (a list of
// 100 k runs made a dozen map look-ups a row).
type Reading struct {
	Run         store.Run
	State       store.State
	Own         Counts // the run's own steps and tokens (Agent)
	Tree        Counts // its whole tree's (Tree)
	Agents      int    // runs in its tree, itself included
	Waiting     int    // requests the run itself waits on
	TreeWaiting int    // requests waiting anywhere in its tree
	Duration    time.Duration
	HasDuration bool
	Root        string       // its tree's root (RootOf)
	Lease       *store.Lease // the lease that drives it, and the run that
	LeaseHolder string       // holds that lease (Lease): nil and "" for none
	Liveness    store.Liveness
}

// Read is the run's reading now; false for a run the model does not hold.
func (m *Model) Read(id string, now time.Time) (Reading, bool) {
	f, s := m.sums()
	_, l := m.leases()
	i, ok := f.at(id) // the forest holds every run the model does, and only those
	if !ok {
		return Reading{}, false
	}
	r := f.runs[i]
	rd := Reading{Run: *r, Own: ownCounts(r),
		Tree: s.tree[i], Agents: int(f.size[i]), Waiting: int(s.waiting[i]), TreeWaiting: int(s.treeWaiting[i]),
		Root: f.runs[f.root[i]].ID}
	waiting := rd.Waiting
	if f.parent[i] < 0 {
		waiting = rd.TreeWaiting // a root counts every request in its tree (State)
	}
	if h := l.holder[i]; h >= 0 {
		rd.Lease, rd.LeaseHolder = l.lease[i], f.runs[h].ID
	}
	records := m.records(id)
	rd.State = store.StateOf(*r, rd.Lease, records, waiting > 0, now)
	rd.Liveness = store.LivenessOf(rd.Lease, records, now)
	switch {
	case r.Summary != nil && r.Summary.HasDuration:
		rd.Duration, rd.HasDuration = r.Summary.Duration, true
	case (rd.State == store.StateRunning || rd.State == store.StateWaiting) && !r.StartedAt.IsZero():
		rd.Duration, rd.HasDuration = now.Sub(r.StartedAt), true
	}
	return rd, true
}
