package views

import "github.com/vigil-run/vigil/store"

// StepFacets counts what an agent's steps hold, for the step filter: how
// many steps call each tool (in the order the tools first appear), call
// none, have a folded retry, are of each kind other than a turn, and are not
// committed yet. A holder of the steps adds each step once and takes a step
// back out before it changes in place (a pending step committed), so the
// facets offered are exactly those some step has, at O(1) a step, however
// few of the steps are in memory.
type StepFacets struct {
	tools     map[string]int
	toolOrder []string
	noTool    int
	retried   int
	pending   int
	kinds     map[store.StepKind]int
	kindOrder []store.StepKind
}

// NewStepFacets counts the facets of steps.
func NewStepFacets(steps []store.Step) *StepFacets {
	f := &StepFacets{tools: map[string]int{}, kinds: map[store.StepKind]int{}}
	for _, st := range steps {
		f.Add(st)
	}
	return f
}

// Add counts a step.
func (f *StepFacets) Add(st store.Step) { f.count(st, 1) }

// Remove takes a counted step back out.
func (f *StepFacets) Remove(st store.Step) { f.count(st, -1) }

func (f *StepFacets) count(st store.Step, d int) {
	tools := stepTools(st.ToolCall)
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t] {
			continue
		}
		seen[t] = true
		if _, ok := f.tools[t]; !ok {
			f.toolOrder = append(f.toolOrder, t)
		}
		f.tools[t] += d
	}
	if len(tools) == 0 && !st.Pending {
		f.noTool += d
	}
	if len(st.Retries) > 0 {
		f.retried += d
	}
	if st.Pending {
		f.pending += d
	}
	if st.Kind != store.StepTurn && !st.Pending {
		if _, ok := f.kinds[st.Kind]; !ok {
			f.kindOrder = append(f.kindOrder, st.Kind)
		}
		f.kinds[st.Kind] += d
	}
}

// list is the filters the counted steps offer, "all steps" first: a tool's,
// a kind's, in the order it first appeared.
func (f *StepFacets) list() []stepFacet {
	facets := []stepFacet{{"", nil}}
	for _, t := range f.toolOrder {
		if f.tools[t] > 0 {
			tool := t
			facets = append(facets, stepFacet{"tool " + tool, func(s store.Step) bool { return callsTool(s, tool) }})
		}
	}
	if f.noTool > 0 {
		facets = append(facets, stepFacet{"no tool call", func(s store.Step) bool { return len(stepTools(s.ToolCall)) == 0 && !s.Pending }})
	}
	if f.retried > 0 {
		facets = append(facets, stepFacet{"retried", func(s store.Step) bool { return len(s.Retries) > 0 }})
	}
	for _, k := range f.kindOrder {
		if f.kinds[k] > 0 {
			kind := k
			facets = append(facets, stepFacet{kind.String(), func(s store.Step) bool { return s.Kind == kind && !s.Pending }})
		}
	}
	if f.pending > 0 {
		facets = append(facets, stepFacet{"not committed", func(s store.Step) bool { return s.Pending }})
	}
	return facets
}
