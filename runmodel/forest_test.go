package runmodel

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

func TestForestOrder(t *testing.T) {
	// Roots newest first by start time; equal times by numeric id, then
	// by id text; a run without a start time is oldest.
	noTime := run("9", "", 0)
	noTime.StartedAt = time.Time{}
	m := modelOf(t, run("1", "", 0), run("2", "", 5), run("10", "", 5), run("b", "", 7), run("a", "", 7), noTime,
		run("3", "2", 9), run("4", "2", 6), run("5", "2", 6))
	equal(t, "roots", m.Roots(), []string{"b", "a", "10", "2", "1", "9"})
	equal(t, "children of 2", m.Children("2"), []string{"4", "5", "3"})
	equal(t, "subtree of 2", m.Subtree("2"), []string{"2", "4", "5", "3"})
	equal(t, "newest", m.Newest(), []string{"3", "b", "a", "5", "4", "10", "2", "1", "9"})
}

func TestForestNewest(t *testing.T) {
	m := modelOf(t, run("1", "", 0), run("2", "1", 1), run("3", "", 2), run("4", "2", 3))
	equal(t, "newest", m.Newest(), []string{"4", "3", "2", "1"})
}

func TestForestOrphansAreRoots(t *testing.T) {
	m := modelOf(t, run("1", "", 0), run("2", "gone", 1), run("3", "2", 2))
	equal(t, "roots", m.Roots(), []string{"2", "1"})
	if m.RootOf("3") != "2" || m.Parent("2") != "" || m.Parent("3") != "2" {
		t.Fatalf("root of 3 %q, parent of 2 %q, of 3 %q", m.RootOf("3"), m.Parent("2"), m.Parent("3"))
	}
	equal(t, "ancestry of 3", m.Ancestry("3"), []string{"2", "3"})
}

func TestForestLoopsCutAtTheSmallestID(t *testing.T) {
	// 5 → 7 → 6 → 5 is a loop with 8 hanging off 7; 4 is its own parent;
	// x/y loop on text ids. Every run is shown, each loop once.
	self := run("4", "4", 0)
	m := modelOf(t, run("1", "", 0), run("5", "6", 1), run("6", "7", 2), run("7", "5", 3), run("8", "7", 4), self,
		run("y", "x", 5), run("x", "y", 6))
	equal(t, "roots", m.Roots(), []string{"x", "5", "4", "1"})
	equal(t, "subtree of 5", m.Subtree("5"), []string{"5", "7", "6", "8"})
	equal(t, "subtree of x", m.Subtree("x"), []string{"x", "y"})
	equal(t, "subtree of 4", m.Subtree("4"), []string{"4"})
	equal(t, "ancestry of 8", m.Ancestry("8"), []string{"5", "7", "8"})
	if m.RootOf("6") != "5" || m.Parent("5") != "" {
		t.Fatalf("root of 6 %q, parent of 5 %q", m.RootOf("6"), m.Parent("5"))
	}
	total := 0
	for _, r := range m.Roots() {
		total += m.Agents(r)
	}
	if total != m.Len() {
		t.Fatalf("the trees hold %d runs, the store %d", total, m.Len())
	}
}

func TestForestQuestions(t *testing.T) {
	m := modelOf(t, run("1", "", 0), run("2", "1", 1), run("3", "2", 2), run("4", "1", 3), run("5", "", 4))
	if !m.Within("3", "1") || !m.Within("1", "1") || m.Within("4", "2") || m.Within("5", "1") || m.Within("nope", "1") {
		t.Fatal("Within is wrong")
	}
	ids := []string{"1", "2", "3", "4", "5", "nope"}
	for _, a := range ids {
		under := m.Under(a)
		for _, id := range ids {
			if under(id) != m.Within(id, a) {
				t.Fatalf("Under(%s)(%s) is %v, Within says otherwise", a, id, under(id))
			}
		}
	}
	if m.Agents("1") != 4 || m.Agents("2") != 2 || m.Agents("nope") != 0 {
		t.Fatalf("agents: %d %d", m.Agents("1"), m.Agents("2"))
	}
	equal(t, "ancestry of 3", m.Ancestry("3"), []string{"1", "2", "3"})
	equal(t, "ancestry of an unknown run", m.Ancestry("nope"), []string{"nope"})
	if m.Subtree("nope") != nil || m.Children("nope") != nil || m.RootOf("nope") != "nope" {
		t.Fatal("an unknown run has a tree")
	}
}

func TestForestFollowsChanges(t *testing.T) {
	m := modelOf(t, run("1", "", 0), run("2", "", 1))
	equal(t, "roots", m.Roots(), []string{"2", "1"})
	c := m.Apply(&store.Changes{Runs: []store.Run{run("3", "1", 2)}}, t0)
	if !c.Tree || !c.Runs {
		t.Fatalf("a new child: %+v", c)
	}
	equal(t, "subtree of 1", m.Subtree("1"), []string{"1", "3"})
	// A run re-read with a new parent moves.
	c = m.Apply(&store.Changes{Runs: []store.Run{run("2", "3", 1)}}, t0)
	if !c.Tree {
		t.Fatal("a moved run does not change the tree")
	}
	equal(t, "roots", m.Roots(), []string{"1"})
	equal(t, "subtree of 1", m.Subtree("1"), []string{"1", "3", "2"})
	// A status change alone leaves the forest as it was.
	done := run("2", "3", 1)
	done.Status = store.StatusCompleted
	if c := m.Apply(&store.Changes{Runs: []store.Run{done}}, t0); c.Tree || !c.Runs {
		t.Fatalf("a status change: %+v", c)
	}
	if m.shapeStale {
		t.Fatal("a status change made the forest stale")
	}
}

// The forest is the same whatever order the runs come in (a store's
// newest first skips the age sort; any other order is sorted), with equal
// start times, runs without one, a duplicate id (the last one given
// stands) and runs that arrive later through Apply.
func TestForestWhateverTheOrderGiven(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 30; round++ {
		n := 2 + rng.Intn(40)
		runs := make([]store.Run, n)
		for i := range runs {
			parent := ""
			if i > 0 && rng.Intn(4) != 0 {
				parent = strconv.Itoa(1 + rng.Intn(i))
			}
			runs[i] = run(strconv.Itoa(i+1), parent, rng.Intn(5)) // many equal start times
			if rng.Intn(6) == 0 {
				runs[i].StartedAt = time.Time{}
			}
		}
		newest := slices.Clone(runs)
		slices.Reverse(newest)
		shuffled := slices.Clone(runs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		dup := append(slices.Clone(shuffled), shuffled[0])
		dup[0].Goal = "replaced"
		want := modelOf(t, runs...)
		for name, given := range map[string][]store.Run{"newest first": newest, "shuffled": shuffled, "with a duplicate": dup} {
			m := modelOf(t, given...)
			equal(t, name+" newest", m.Newest(), want.Newest())
			for _, root := range want.Roots() {
				equal(t, name+" subtree of "+root, m.Subtree(root), want.Subtree(root))
			}
			if m.Len() != n {
				t.Fatalf("%s: %d runs, want %d", name, m.Len(), n)
			}
		}
		// Runs born after the load join the order where their age puts them.
		m := modelOf(t, newest[:n/2]...)
		m.Newest()
		m.Apply(&store.Changes{Runs: newest[n/2:]}, t0)
		equal(t, "after Apply newest", m.Newest(), want.Newest())
	}
}

// Shape moves when a run joins or moves in the forest, and only then: a
// count, a lease or a state change leaves what was laid out from the
// forest as it was.
func TestShapeMovesWithTheForestOnly(t *testing.T) {
	m := modelOf(t, run("1", "", 0), run("2", "1", 1))
	s := m.Shape()
	m.Apply(&store.Changes{Steps: []store.StepRow{{RunID: "2", RowID: 9, Number: 1, Tokens: 5}}}, t0)
	done := run("2", "1", 1)
	done.Status, done.Outcome = store.StatusCompleted, "success"
	m.Apply(&store.Changes{Runs: []store.Run{done}, LeasesChanged: true, Leases: map[string]store.Lease{"1": *liveLease()}}, t0)
	if m.Shape() != s {
		t.Fatalf("a count, a lease and a finish moved the shape %d → %d", s, m.Shape())
	}
	m.Apply(&store.Changes{Runs: []store.Run{run("3", "2", 2)}}, t0)
	if m.Shape() == s {
		t.Fatal("a new child left the shape as it was")
	}
	s = m.Shape()
	moved := run("3", "1", 2)
	m.Apply(&store.Changes{Runs: []store.Run{moved}}, t0)
	if m.Shape() == s {
		t.Fatal("a run moved to another parent left the shape as it was")
	}
	equal(t, "children of 1", m.Children("1"), []string{"2", "3"})
}
