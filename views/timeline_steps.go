package views

import (
	"sort"
	"strconv"

	"github.com/vigil-run/vigil/store"
)

// TimelineSteps is the shown agent's steps as the timeline reads them. Every
// step's key is known (its RowID, RunID, Number and Pending); its whole row
// may not be in memory: a run of a million steps keeps a window of them
// near the screen, and the explorer reads the rest by range as the cursor
// moves (the pane says which it needs, Need).
type TimelineSteps interface {
	Len() int
	// Step is step i; ok is false when only its key is known yet.
	Step(i int) (st store.Step, ok bool)
	// Complete says every step is in memory: the pane searches and filters
	// them itself. Otherwise a search or a filter is a StepScan the
	// explorer streams through the store.
	Complete() bool
	// Facets counts what every step holds, in memory or not.
	Facets() *StepFacets
	// Rev moves with every change to the steps (revision.go).
	Revised
}

// StepSlice is steps held whole as TimelineSteps.
type StepSlice struct {
	Steps  []store.Step
	facets *StepFacets
}

// NewStepSlice holds steps whole.
func NewStepSlice(steps []store.Step) *StepSlice {
	return &StepSlice{Steps: steps, facets: NewStepFacets(steps)}
}

func (s *StepSlice) Len() int                      { return len(s.Steps) }
func (s *StepSlice) Step(i int) (store.Step, bool) { return s.Steps[i], true }
func (s *StepSlice) Complete() bool                { return true }
func (s *StepSlice) Facets() *StepFacets           { return s.facets }

// Rev is always the same: a slice is shown as it was handed over (Show).
func (s *StepSlice) Rev() uint64 { return 0 }

// StepScan is a search and a filter applied to an agent's steps, fed every
// step once in order (Add): the steps the filter keeps and those among them
// the search matches. The timeline keeps one up to date as steps arrive
// (O(new steps) a refresh); a new query or filter over a run not held whole
// is a StepScan the explorer runs over the store (Seq names it) and hands
// back (Timeline.ScanDone).
type StepScan struct {
	Seq   int
	facet func(store.Step) bool // nil: every step is kept
	query string                // lower case; "" matches none
	// Kept are the steps the filter keeps (nil without a filter), Hits the
	// kept steps the query matches, both as step indices, and HitRows the
	// hits as rows of the filtered list.
	Kept, Hits, HitRows []int
	// N is how many steps were fed.
	N int
}

func newStepScan(seq int, facet func(store.Step) bool, query string) *StepScan {
	sc := &StepScan{Seq: seq, facet: facet, query: query}
	if facet != nil {
		sc.Kept = []int{}
	}
	return sc
}

// fork is an empty scan with sc's tests.
func (sc *StepScan) fork() *StepScan { return newStepScan(sc.Seq, sc.facet, sc.query) }

// Add feeds step i (the next, or again the last after it changed in place:
// what was counted from i on is dropped first).
func (sc *StepScan) Add(i int, st store.Step) {
	for len(sc.Kept) > 0 && sc.Kept[len(sc.Kept)-1] >= i {
		sc.Kept = sc.Kept[:len(sc.Kept)-1]
	}
	for len(sc.Hits) > 0 && sc.Hits[len(sc.Hits)-1] >= i {
		sc.Hits, sc.HitRows = sc.Hits[:len(sc.Hits)-1], sc.HitRows[:len(sc.HitRows)-1]
	}
	sc.N = i + 1
	row := i
	if sc.facet != nil {
		if !sc.facet(st) {
			return
		}
		sc.Kept = append(sc.Kept, i)
		row = len(sc.Kept) - 1
	}
	if sc.query != "" && containsFold(stepText(st), sc.query) {
		sc.Hits, sc.HitRows = append(sc.Hits, i), append(sc.HitRows, row)
	}
}

// merge is sc (fed steps from 0) with live (fed from its first step on,
// as they arrived while sc was read), live winning where both have a step.
func (sc *StepScan) merge(live *StepScan, liveMin int) *StepScan {
	if live == nil || live.N == 0 {
		return sc
	}
	out := sc.fork()
	if sc.Kept != nil {
		for _, k := range sc.Kept {
			if k < liveMin {
				out.Kept = append(out.Kept, k)
			}
		}
		out.Kept = append(out.Kept, live.Kept...)
	}
	for _, h := range sc.Hits {
		if h < liveMin {
			out.Hits = append(out.Hits, h)
		}
	}
	out.Hits = append(out.Hits, live.Hits...)
	out.N = max(sc.N, live.N)
	out.HitRows = out.Hits
	if out.Kept != nil {
		out.HitRows = make([]int, len(out.Hits))
		for j, h := range out.Hits {
			out.HitRows[j] = sort.SearchInts(out.Kept, h)
		}
	}
	return out
}

// stepText is a step's text as the search reads it: its number, decision
// and tool call (the store's text: what is drawn is that text made safe).
func stepText(st store.Step) string {
	return strconv.Itoa(st.Number) + " " + st.Decision + " · " + st.ToolCall
}
