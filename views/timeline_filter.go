package views

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// The timeline's step filter (the StepFilter key) cycles through what the
// agent's steps hold: every step, then the steps calling each tool (in
// the order the tools first appear), steps with no tool call, steps with
// a folded retry, steps of each kind other than a turn, and steps not
// committed yet; only facets some step has are offered (StepFacets counts
// them, timeline_facets.go).

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
