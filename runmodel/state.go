package runmodel

import (
	"fmt"
	"time"

	"github.com/vigil-run/vigil/store"
)

// leases are the effective leases, by age number: the lease that drives a
// run (its own, or — io-harness leases only a tree's root — the nearest
// ancestor's) and the run that holds it (-1 for none).
type leases struct {
	lease  []*store.Lease
	holder []int32
}

// leases are the effective leases, worked out again first if a lease or a
// run changed: one pass from the roots down.
func (m *Model) leases() (*forest, *leases) {
	f := m.tree()
	if !m.leasesStale {
		return f, &m.l
	}
	n := len(f.runs)
	l := leases{lease: make([]*store.Lease, n), holder: make([]int32, n)}
	for _, i := range f.order {
		switch p := f.parent[i]; {
		case f.runs[i].Lease != nil:
			l.lease[i], l.holder[i] = f.runs[i].Lease, i
		case p >= 0:
			l.lease[i], l.holder[i] = l.lease[p], l.holder[p]
		default:
			l.holder[i] = -1
		}
	}
	m.l, m.leasesStale = l, false
	return f, &m.l
}

// Lease is the lease that drives a run and the run whose lease it is
// (nil and "" when none does).
func (m *Model) Lease(id string) (*store.Lease, string) {
	f, l := m.leases()
	i, ok := f.at(id)
	if !ok || l.holder[i] < 0 {
		return nil, ""
	}
	return l.lease[i], f.runs[l.holder[i]].ID
}

// Liveness is what the run's effective lease says about its driver now.
func (m *Model) Liveness(id string, now time.Time) store.Liveness {
	l, _ := m.Lease(id)
	return store.LivenessOf(l, m.records(id), now)
}

// State is how the run reads to a person now, from its status, its
// effective lease and what waits on a human: a root counts every request
// in its tree (a tree held up by a human anywhere is waiting), any other
// run its own.
func (m *Model) State(id string, now time.Time) store.State {
	r := m.run(id)
	if r == nil {
		return store.StateUnknown
	}
	waiting := m.Waiting(id)
	if m.Parent(id) == "" {
		waiting = m.TreeWaiting(id)
	}
	l, _ := m.Lease(id)
	return store.StateOf(*r, l, m.records(id), waiting > 0, now)
}

// Duration is how long a run took, or (running or waiting) has run so
// far; false when neither can be told.
func (m *Model) Duration(id string, now time.Time) (time.Duration, bool) {
	r := m.run(id)
	switch {
	case r == nil:
		return 0, false
	case r.Summary != nil && r.Summary.HasDuration:
		return r.Summary.Duration, true
	}
	if st := m.State(id, now); (st == store.StateRunning || st == store.StateWaiting) && !r.StartedAt.IsZero() {
		return now.Sub(r.StartedAt), true
	}
	return 0, false
}

// Classifier judges whether a decision reaches a run; a store.Source is one.
type Classifier interface {
	Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string)
}

// Delivery says whether a decision on q, written now, reaches its run, and
// if not, why: the source judges from the asking run and its effective
// lease.
func (m *Model) Delivery(c Classifier, q store.Request, now time.Time) (store.Delivery, string) {
	r := m.run(q.RunID)
	if r == nil {
		return store.Closed, fmt.Sprintf("run %s is not in the store", q.RunID)
	}
	l, _ := m.Lease(q.RunID)
	return c.Classify(q, *r, l, now)
}
