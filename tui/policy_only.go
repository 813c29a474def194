package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
)

// A run that committed no step can still have recorded policy events:
// io-harness's authorize_provider (src/run/gate.rs) asks about the
// provider's host at step 0, before the first step, and a deferred answer
// there stops the run with the event written and no step committed. Its
// timeline has no row to select, so the step pane shows that step as what
// it is: not committed, with its policy events.

// readPolicyOnly is the step pane of a run with no step rows: its policy
// events as an uncommitted step, nil when it has none. Only a run without
// rows pays the read.
func readPolicyOnly(ctx context.Context, src store.Source, runID string) (*store.StepDetail, error) {
	if !src.Capabilities().Has(store.CapPolicy) {
		return nil, nil
	}
	evs, err := src.PolicyEvents(ctx, runID)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	lo, hi := evs[0].Step, evs[0].Step
	for _, e := range evs {
		lo, hi = min(lo, e.Step), max(hi, e.Step)
	}
	at := fmt.Sprintf("step %d", lo)
	if hi != lo {
		at = fmt.Sprintf("steps %d–%d", lo, hi)
	}
	d := &store.StepDetail{Step: store.Step{RunID: runID, Number: lo, Pending: true, TokensUnknown: true,
		Decision: "no step committed: the run recorded policy events at " + at}, Policy: evs}
	return d, nil
}

// policyOnlyAfter reads the shown agent again when it has no step rows and
// a refresh names its run or one of its requests: the policy event of a
// deferred provider check comes with the request, before the run stops.
func (m *Model) policyOnlyAfter(ch *store.Changes) tea.Cmd {
	a := &m.st.agent
	if !a.loaded || a.index == nil || a.index.Len() > 0 || !m.src.Capabilities().Has(store.CapPolicy) {
		return nil
	}
	for _, r := range ch.Runs {
		if r.ID == a.id {
			return m.reloadAgent()
		}
	}
	for _, q := range ch.Requests {
		if q.RunID == a.id {
			return m.reloadAgent()
		}
	}
	return nil
}
