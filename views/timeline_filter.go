package views

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// The timeline's step filter (the StepFilter key) cycles through what the
// agent's steps hold: every step, then the steps calling each tool (in
// the order the tools first appear), steps with no tool call, steps with
// a folded retry, steps of each kind other than a turn, and steps not
// committed yet; only facets some step has are offered.

// stepFacet is one filter: its label (in the title) and its test.
type stepFacet struct {
	label string
	match func(store.Step) bool
}

// stepTools are the tools a step's call summary names: "read_file:{…} |
// run:{…}" calls read_file and run.
func stepTools(call string) []string {
	var out []string
	for _, part := range strings.Split(call, " | ") {
		name := strings.TrimSpace(part)
		if i := strings.IndexAny(name, ":( {"); i >= 0 {
			name = name[:i]
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

func callsTool(st store.Step, tool string) bool {
	for _, t := range stepTools(st.ToolCall) {
		if t == tool {
			return true
		}
	}
	return false
}

// stepFacets are the filters the steps offer, "all steps" first.
func stepFacets(steps []store.Step) []stepFacet {
	facets := []stepFacet{{"", nil}}
	seen := map[string]bool{}
	noTool, retried, pending := false, false, false
	kinds := map[store.StepKind]bool{}
	var kindOrder []store.StepKind
	for _, st := range steps {
		tools := stepTools(st.ToolCall)
		for _, t := range tools {
			if !seen[t] {
				seen[t] = true
				tool := t
				facets = append(facets, stepFacet{"tool " + tool, func(s store.Step) bool { return callsTool(s, tool) }})
			}
		}
		noTool = noTool || (len(tools) == 0 && !st.Pending)
		retried = retried || len(st.Retries) > 0
		pending = pending || st.Pending
		if st.Kind != store.StepTurn && !st.Pending && !kinds[st.Kind] {
			kinds[st.Kind] = true
			kindOrder = append(kindOrder, st.Kind)
		}
	}
	if noTool {
		facets = append(facets, stepFacet{"no tool call", func(s store.Step) bool { return len(stepTools(s.ToolCall)) == 0 && !s.Pending }})
	}
	if retried {
		facets = append(facets, stepFacet{"retried", func(s store.Step) bool { return len(s.Retries) > 0 }})
	}
	for _, k := range kindOrder {
		kind := k
		facets = append(facets, stepFacet{kind.String(), func(s store.Step) bool { return s.Kind == kind && !s.Pending }})
	}
	if pending {
		facets = append(facets, stepFacet{"not committed", func(s store.Step) bool { return s.Pending }})
	}
	return facets
}

// nextFacet is the facet after the one labelled cur ("" after the last).
func nextFacet(facets []stepFacet, cur string) stepFacet {
	for i, f := range facets {
		if f.label == cur && i+1 < len(facets) {
			return facets[i+1]
		}
	}
	return facets[0]
}

// facetByLabel finds a facet again after the steps changed.
func facetByLabel(facets []stepFacet, label string) (stepFacet, bool) {
	for _, f := range facets {
		if f.label == label {
			return f, true
		}
	}
	return stepFacet{}, false
}
