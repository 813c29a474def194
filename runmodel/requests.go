package runmodel

import (
	"slices"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// Requests are the undecided requests, first seen first (then by kind and
// id, so the order is total).
func (m *Model) Requests() []Request {
	out := make([]Request, 0, len(m.requests))
	for _, q := range m.requests {
		out = append(out, *q)
	}
	slices.SortFunc(out, func(a, b Request) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		if na, nb := store.IDNumber(a.ID), store.IDNumber(b.ID); na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Pending is how many requests wait on a human in the whole store:
// undecided and not orphaned (an orphan is listed in Requests, but nobody
// reads a decision on it).
func (m *Model) Pending() int {
	n := 0
	for _, q := range m.requests {
		if q.Waits() {
			n++
		}
	}
	return n
}
