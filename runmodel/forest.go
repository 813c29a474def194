package runmodel

import (
	"cmp"
	"slices"
	"time"

	"github.com/vigil-run/vigil/store"
)

// forest is the run tree worked out from the parent links. Runs are
// numbered by age (oldest first); every array is indexed by that number.
type forest struct {
	runs   []*store.Run     // by age
	ids    map[string]int32 // run id → slot: the model's (a slot past age came after the forest)
	age    []int32          // slot → age (-1: a slot with no run)
	parent []int32          // the parent in the forest, -1 for a root
	kidOff []int32          // the children of i are kids[kidOff[i]:kidOff[i+1]], oldest first
	kids   []int32
	kidIDs []string // kids as ids, so Children hands out a slice without copying
	roots  []string // newest first
	rootAt []int32  // roots as age numbers
	pre    []string // preorder: trees newest root first, parents before children, siblings oldest first
	order  []int32  // pre as age numbers
	pos    []int32  // where each run is in pre
	size   []int32  // how many runs its subtree holds, itself included
	root   []int32  // its tree's root
}

// ageKey is a run with what the age order compares, worked out once per
// run rather than per comparison (an id's number is parsed from its text).
type ageKey struct {
	at  time.Time
	num int64
	r   *store.Run
	s   int32 // its slot
}

// olderFirst orders runs by age: start time, then numeric id, then id
// text (formats whose ids are not numbers rely on the time). A run with no
// start time counts as oldest, so the order is total.
func olderFirst(a, b ageKey) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	if c := cmp.Compare(a.num, b.num); c != 0 {
		return c
	}
	return cmp.Compare(a.r.ID, b.r.ID)
}

// smallerID is the loop-cutting order: numeric ids by value, others by text.
func smallerID(a, b string) bool {
	if na, nb := store.IDNumber(a), store.IDNumber(b); na != nb {
		return na < nb
	}
	return a < b
}

// buildForest derives the forest of the runs in slots (ids: id → slot)
// in O(n log n) for the age sort and O(n) for everything else. Slots come
// newest first as a store lists them, so the sort is skipped when they are
// in age order already (on 100 k runs it was an eighth of listing them);
// any other order is sorted.
func buildForest(ids map[string]int32, slots []*store.Run) forest {
	f := forest{ids: ids, age: make([]int32, len(slots))}
	keyed := make([]ageKey, 0, len(ids))
	for s := len(slots) - 1; s >= 0; s-- {
		f.age[s] = -1
		if r := slots[s]; r != nil {
			keyed = append(keyed, ageKey{r.StartedAt, store.IDNumber(r.ID), r, int32(s)})
		}
	}
	if !slices.IsSortedFunc(keyed, olderFirst) {
		slices.SortFunc(keyed, olderFirst)
	}
	n := len(keyed)
	f.runs, f.parent = make([]*store.Run, 0, n), make([]int32, n)
	for i, k := range keyed {
		f.runs = append(f.runs, k.r)
		f.age[k.s] = int32(i)
	}
	for i, r := range f.runs {
		f.parent[i] = -1
		if p, ok := f.at(r.ParentID); ok && r.ParentID != "" {
			f.parent[i] = p // a parent not in the store leaves an orphan, shown as a root
		}
	}
	f.cutLoops()
	f.link()
	f.walk()
	return f
}

// cutLoops makes every run reachable from a root: parent links that loop
// (a damaged store) are cut at the loop's smallest id, which becomes a
// root. Each run is climbed through once, so it is linear.
func (f *forest) cutLoops() {
	const reachesRoot = -1
	mark := make([]int32, len(f.runs)) // 0 not yet climbed, reachesRoot, or the number of the climb it is on
	var path []int32
	climb := int32(0)
	for start := range f.runs {
		if mark[start] != 0 {
			continue
		}
		climb++
		path = path[:0]
		for i := int32(start); mark[i] != reachesRoot; i = f.parent[i] {
			if mark[i] == climb {
				f.cutLoopAt(i)
				break
			}
			mark[i] = climb
			path = append(path, i)
			if f.parent[i] < 0 {
				break
			}
		}
		for _, i := range path {
			mark[i] = reachesRoot
		}
	}
}

// cutLoopAt cuts the loop through i at its smallest id.
func (f *forest) cutLoopAt(i int32) {
	head := i
	for j := f.parent[i]; j != i; j = f.parent[j] {
		if smallerID(f.runs[j].ID, f.runs[head].ID) {
			head = j
		}
	}
	f.parent[head] = -1
}

// link indexes children by parent (oldest first, as runs are numbered)
// and lists the roots newest first.
func (f *forest) link() {
	n := len(f.runs)
	f.kidOff = make([]int32, n+1)
	for _, p := range f.parent {
		if p >= 0 {
			f.kidOff[p+1]++
		}
	}
	for i := 1; i <= n; i++ {
		f.kidOff[i] += f.kidOff[i-1]
	}
	f.kids = make([]int32, f.kidOff[n])
	f.kidIDs = make([]string, f.kidOff[n])
	next := slices.Clone(f.kidOff[:n])
	for i, p := range f.parent {
		if p < 0 {
			continue
		}
		f.kids[next[p]], f.kidIDs[next[p]] = int32(i), f.runs[i].ID
		next[p]++
	}
	for i := n - 1; i >= 0; i-- {
		if f.parent[i] < 0 {
			f.roots = append(f.roots, f.runs[i].ID)
			f.rootAt = append(f.rootAt, int32(i))
		}
	}
}

// walk lays the forest out in preorder without recursion (a chain can be
// as deep as the store is long) and sizes every subtree.
func (f *forest) walk() {
	n := len(f.runs)
	f.pre = make([]string, 0, n)
	f.pos, f.size, f.root = make([]int32, n), make([]int32, n), make([]int32, n)
	order := make([]int32, 0, n)
	stack := make([]int32, 0, len(f.roots))
	for k := len(f.rootAt) - 1; k >= 0; k-- {
		stack = append(stack, f.rootAt[k])
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f.pos[i] = int32(len(order))
		order = append(order, i)
		f.pre = append(f.pre, f.runs[i].ID)
		if p := f.parent[i]; p >= 0 {
			f.root[i] = f.root[p]
		} else {
			f.root[i] = i
		}
		kids := f.kids[f.kidOff[i]:f.kidOff[i+1]]
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, kids[k])
		}
	}
	f.order = order
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		f.size[i]++
		if p := f.parent[i]; p >= 0 {
			f.size[p] += f.size[i]
		}
	}
}

// at is a run's age number, or false for a run the store does not hold.
func (f *forest) at(id string) (int32, bool) {
	s, ok := f.ids[id]
	if !ok || int(s) >= len(f.age) || f.age[s] < 0 {
		return 0, false
	}
	return f.age[s], true
}

// tree is the forest, derived again first if the runs changed shape.
func (m *Model) tree() *forest {
	if m.shapeStale {
		m.f = buildForest(m.ids, m.slots)
		m.shapes++
		m.shapeStale, m.sumsStale, m.leasesStale = false, true, true
	}
	return &m.f
}

// Shape counts the forests derived so far: while it stays the same, no
// run joined or moved (Children, Subtree and the order hold), so what is
// laid out from them can be kept.
func (m *Model) Shape() int {
	m.tree()
	return m.shapes
}

// Roots are the runs no other run holds, newest first: roots proper,
// orphans whose parent is not in the store, and the runs where loops were
// cut. The slice is the model's: do not change it.
func (m *Model) Roots() []string { return m.tree().roots }

// Newest is every run, newest first.
func (m *Model) Newest() []string {
	f := m.tree()
	out := make([]string, len(f.runs))
	for i, r := range f.runs {
		out[len(out)-1-i] = r.ID
	}
	return out
}

// Children are a run's children in the forest, oldest first. The slice
// is the model's: do not change it.
func (m *Model) Children(id string) []string {
	f := m.tree()
	i, ok := f.at(id)
	if !ok {
		return nil
	}
	return f.kidIDs[f.kidOff[i]:f.kidOff[i+1]]
}

// Parent is a run's parent in the forest: "" for a root, for an orphan and
// for a run where a loop was cut.
func (m *Model) Parent(id string) string {
	f := m.tree()
	if i, ok := f.at(id); ok && f.parent[i] >= 0 {
		return f.runs[f.parent[i]].ID
	}
	return ""
}

// RootOf is the root of a run's tree (the id itself for a run the store
// does not hold).
func (m *Model) RootOf(id string) string {
	f := m.tree()
	if i, ok := f.at(id); ok {
		return f.runs[f.root[i]].ID
	}
	return id
}

// Ancestry is the chain of run ids from the root down to id.
func (m *Model) Ancestry(id string) []string {
	f := m.tree()
	i, ok := f.at(id)
	if !ok {
		return []string{id}
	}
	var chain []string
	for ; i >= 0; i = f.parent[i] {
		chain = append(chain, f.runs[i].ID)
	}
	slices.Reverse(chain)
	return chain
}

// Subtree is a run and every run under it, parents before children,
// siblings oldest first (nil for a run the store does not hold). The slice
// is the model's: do not change it.
func (m *Model) Subtree(id string) []string {
	f := m.tree()
	i, ok := f.at(id)
	if !ok {
		return nil
	}
	return f.pre[f.pos[i] : f.pos[i]+f.size[i]]
}

// Within reports whether run id is ancestor or somewhere under it.
func (m *Model) Within(id, ancestor string) bool {
	f := m.tree()
	i, ok := f.at(id)
	a, okA := f.at(ancestor)
	return ok && okA && f.pos[a] <= f.pos[i] && f.pos[i] < f.pos[a]+f.size[a]
}

// Under is Within(id, ancestor) for many ids in a row, ancestor looked up
// once: laying out a tree 100 k wide asks it of every agent.
func (m *Model) Under(ancestor string) func(id string) bool {
	f := m.tree()
	a, ok := f.at(ancestor)
	if !ok {
		return func(string) bool { return false }
	}
	lo, hi := f.pos[a], f.pos[a]+f.size[a]
	return func(id string) bool {
		i, ok := f.at(id)
		return ok && lo <= f.pos[i] && f.pos[i] < hi
	}
}

// Agents is how many runs a run's tree holds, itself included.
func (m *Model) Agents(id string) int {
	f := m.tree()
	if i, ok := f.at(id); ok {
		return int(f.size[i])
	}
	return 0
}
