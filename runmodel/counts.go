package runmodel

import "github.com/vigil-run/vigil/store"

// Counts are steps and tokens over one scope. Known is false while a count
// in the scope is still on its way (then Steps and Tokens are a floor);
// show it as unknown, never as the floor.
type Counts struct {
	Steps  int
	Tokens int64
	Known  bool
	// Unreported is how many steps in the scope had no reported token
	// count: Tokens is the sum of the others, and says so (store.Run).
	Unreported int
}

// sums are what is added up over trees, by age number.
type sums struct {
	tree        []Counts
	waiting     []int32 // requests the run itself waits on
	treeWaiting []int32 // requests waiting anywhere in its tree
}

// sums are the tree sums, added up again first if a count or a request
// changed: one pass from the leaves up.
func (m *Model) sums() (*forest, *sums) {
	f := m.tree()
	if !m.sumsStale {
		return f, &m.s
	}
	n := len(f.runs)
	s := sums{tree: make([]Counts, n), waiting: make([]int32, n), treeWaiting: make([]int32, n)}
	for i, r := range f.runs {
		s.tree[i] = ownCounts(r)
	}
	for _, q := range m.requests {
		// An orphan is listed, but nobody waits on it (store.Request.Waits).
		if i, ok := f.at(q.RunID); ok && q.Waits() {
			s.waiting[i]++
		}
	}
	copy(s.treeWaiting, s.waiting)
	for k := n - 1; k >= 0; k-- {
		i := f.order[k]
		p := f.parent[i]
		if p < 0 {
			continue
		}
		t, c := &s.tree[p], s.tree[i]
		t.Steps += c.Steps
		t.Tokens += c.Tokens
		t.Unreported += c.Unreported
		t.Known = t.Known && c.Known
		s.treeWaiting[p] += s.treeWaiting[i]
	}
	m.s, m.sumsStale = s, false
	return f, &m.s
}

// Agent is the run's own counts: this agent's steps and tokens.
func (m *Model) Agent(id string) Counts {
	r := m.run(id)
	if r == nil {
		return Counts{}
	}
	return ownCounts(r)
}

// ownCounts are a run's own counts.
func ownCounts(r *store.Run) Counts {
	return Counts{Steps: r.Steps, Tokens: r.Tokens, Known: r.StatsKnown, Unreported: r.Unreported}
}

// Tree is the counts of the run and every run under it.
func (m *Model) Tree(id string) Counts {
	f, s := m.sums()
	if i, ok := f.at(id); ok {
		return s.tree[i]
	}
	return Counts{}
}

// Waiting is how many requests the run itself asked and waits on:
// undecided, and not orphaned.
func (m *Model) Waiting(id string) int {
	f, s := m.sums()
	if i, ok := f.at(id); ok {
		return int(s.waiting[i])
	}
	return 0
}

// TreeWaiting is how many requests wait in the run's tree (undecided, not
// orphaned): the
// run's own and every run's under it. A run with TreeWaiting > 0 is one a
// human holds up, directly or through an agent it waits for.
func (m *Model) TreeWaiting(id string) int {
	f, s := m.sums()
	if i, ok := f.at(id); ok {
		return int(s.treeWaiting[i])
	}
	return 0
}
