package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/vigil-run/vigil/store"
)

// Every policy event of the run, at its step.
//
// A step's detail holds the events under its number, but io-harness
// records some at a step that never gets a row: authorize_provider
// (src/run/gate.rs) asks about the provider's host at step 0, before the
// first step, and a deferred answer there stops the run with no step
// committed at all. So show lists the run's events whole, each at its
// step, and says which steps were never committed.

// loadPolicy reads the run's policy events, where the format records them.
func (sh *shown) loadPolicy(ctx context.Context, src store.Source) error {
	evs, err := src.PolicyEvents(ctx, sh.id)
	sh.policy = evs
	return err
}

// committedSteps are the numbers of the run's committed steps.
func (sh *shown) committedSteps() map[int]bool {
	out := make(map[int]bool, len(sh.steps))
	for _, st := range sh.steps {
		if !st.Pending {
			out[st.Number] = true
		}
	}
	return out
}

// policyWhat is an event's verdict in words: a refusal with its rule, or
// what was decided.
func policyWhat(e store.PolicyEvent) string {
	if e.Kind == store.PolicyRefusal {
		if e.Rule != "" {
			return "refused (rule " + clean(e.Rule) + ")"
		}
		return "refused"
	}
	if e.Decision == "" {
		return clean(string(e.Kind))
	}
	return clean(string(e.Decision))
}

// policyTarget is the target, and what was performed instead when an
// approver changed it.
func policyTarget(e store.PolicyEvent) string {
	if e.Performed != "" && e.Performed != e.Target {
		return cleanCut(e.Target, 40) + " → " + cleanCut(e.Performed, 40)
	}
	return cleanCut(e.Target, 56)
}

const notCommitted = "step not committed"

// policyText prints the events, when the run has any.
func policyText(w io.Writer, sh *shown) {
	if len(sh.policy) == 0 {
		return
	}
	done := sh.committedSteps()
	fmt.Fprintf(w, "\npolicy events (%d)\n", len(sh.policy))
	t := &table{header: []string{"STEP", "EVENT", "ACT", "TARGET", "BY", ""}, right: map[int]bool{0: true}}
	for _, e := range sh.policy {
		note := ""
		if !done[e.Step] {
			note = notCommitted
		}
		t.add(strconv.Itoa(e.Step), policyWhat(e), clean(e.Act), policyTarget(e), clean(e.Source), note)
	}
	t.write(w, "  ")
}

// policyMarkdown writes the events as a section, when the run has any.
func policyMarkdown(w io.Writer, sh *shown) {
	if len(sh.policy) == 0 {
		return
	}
	done := sh.committedSteps()
	fmt.Fprintf(w, "## Policy events\n\nEvery refusal and decision of the run's policy, at its step.\n\n")
	var rows [][]string
	for _, e := range sh.policy {
		note := " "
		if !done[e.Step] {
			note = notCommitted
		}
		rows = append(rows, []string{strconv.Itoa(e.Step), mdCell(policyWhat(e)), mdCell(e.Act), mdCode(e.Target, true), mdCell(e.Source), note})
	}
	mdTable(w, []string{"Step", "Event", "Act", "Target", "By", "Note"}, rows)
}

// jsonRunPolicyEvent is a policy event with its step, and whether that
// step was committed (has a row in the steps list).
type jsonRunPolicyEvent struct {
	Step          int  `json:"step"`
	StepCommitted bool `json:"step_committed"`
	jsonPolicyEvent
}

func (sh *shown) policyJSON() []jsonRunPolicyEvent {
	done := sh.committedSteps()
	out := make([]jsonRunPolicyEvent, 0, len(sh.policy))
	for _, p := range sh.policy {
		out = append(out, jsonRunPolicyEvent{Step: p.Step, StepCommitted: done[p.Step], jsonPolicyEvent: policyEventJSON(p)})
	}
	return out
}
