package union

import (
	"sync"

	"github.com/vigil-run/vigil/store"
)

// links resolves Request.For in a set: a request kept apart from the run
// it acts for (vigil's gate store) names that run by format and the run's
// own id; when a store of that format in the set holds the run, For.RunID
// becomes the set's id of it. A request seen before its run is kept, and
// given again (linked) with the changes that bring the run.
type links struct {
	mu      sync.Mutex
	known   map[linkKey]string                   // → the set's run id
	waiting map[linkKey]map[string]store.Request // by request id
}

type linkKey struct{ format, run string }

// learn notes runs of the set (prefixed ids) and returns the waiting
// requests they link, linked.
func (s *Set) learn(runs []store.Run) []store.Request {
	l := &s.links
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []store.Request
	for _, r := range runs {
		m, own, err := s.owner(r.ID)
		if err != nil {
			continue
		}
		src, _ := m.source()
		k := linkKey{src.Format(), own}
		if l.known == nil {
			l.known = map[linkKey]string{}
		}
		l.known[k] = r.ID
		for _, q := range l.waiting[k] {
			q.For.RunID, q.For.InSet = r.ID, true
			out = append(out, q)
		}
		delete(l.waiting, k)
	}
	return out
}

// appendNew adds to reqs the linked ones it does not hold a newer read of.
func appendNew(reqs, linked []store.Request) []store.Request {
	if len(linked) == 0 {
		return reqs
	}
	have := make(map[store.RequestKey]bool, len(reqs))
	for _, q := range reqs {
		have[q.Key()] = true
	}
	for _, q := range linked {
		if !have[q.Key()] {
			reqs = append(reqs, q)
		}
	}
	return reqs
}

// link resolves each request's For in place; an open one whose run is not
// known yet waits for it.
func (s *Set) link(reqs []store.Request) {
	l := &s.links
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range reqs {
		q := &reqs[i]
		if q.For.RunID == "" || q.For.InSet {
			continue
		}
		k := linkKey{q.For.Format, q.For.RunID}
		// This read is the request's newest: an older one kept waiting
		// must never be given again over it.
		delete(l.waiting[k], q.Key().String())
		if id, ok := l.known[k]; ok {
			q.For.RunID, q.For.InSet = id, true
			continue
		}
		if q.Resolved {
			continue // decided: nothing to give again
		}
		if l.waiting == nil {
			l.waiting = map[linkKey]map[string]store.Request{}
		}
		if l.waiting[k] == nil {
			l.waiting[k] = map[string]store.Request{}
		}
		l.waiting[k][q.Key().String()] = *q
	}
}
