package leviath

import (
	"encoding/binary"
	"hash/fnv"
)

// probePlan is what version works out of a listing of the runs directory
// and the set of ended runs without touching the disk: a sum of the run
// directories' names, and the live runs whose files it stats. It is made
// again only when either is replaced (a new listing, a refresh's
// publishEnded), so an idle probe does no work per ended run.
type probePlan struct {
	names    []string // the listing it was made from, told by identity
	ended    *map[string]bool
	namesSum uint64
	live     []string
}

// planFor gives the plan of this listing and ended set, made once.
func (s *Store) planFor(names []string, ended *map[string]bool) *probePlan {
	if p := s.plan.Load(); p != nil && p.ended == ended && sameArray(p.names, names) {
		return p
	}
	p := &probePlan{names: names, ended: ended}
	h := fnv.New64a()
	var n [8]byte
	for _, name := range names {
		s.namesPlanned.Add(1)
		binary.LittleEndian.PutUint64(n[:], uint64(len(name))) // "ab"+"c" is not "a"+"bc"
		h.Write(n[:])
		h.Write([]byte(name))
		if ended == nil || !(*ended)[name] {
			p.live = append(p.live, name)
		}
	}
	p.namesSum = h.Sum64()
	s.plan.Store(p)
	return p
}

// sameArray reports whether a and b are the same slice of one array
// (runDirNames gives its last listing again as it was).
func sameArray(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
