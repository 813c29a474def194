package tui

import (
	"time"

	"github.com/vigil-run/vigil/store"
)

// agentView is the agent the timeline and the drift pane show: its steps,
// folded forward from each refresh and timed by its provider calls, and
// its context samples. Only the explorer folds a timeline (tail prints
// rows as they come, show reads one picture), so it lives here.
type agentView struct {
	id       string
	loaded   bool
	steps    []store.Step
	stepsRow int64 // the highest step row folded into steps
	samples  []store.ContextSample
	calls    map[int]map[int64]store.ProviderCall // provider attempts by step, by row: they time its steps
}

// want starts showing an agent whose rows are on their way.
func (a *agentView) want(id string) {
	*a = agentView{id: id}
}

// set shows an agent: its steps, context samples and provider calls.
func (a *agentView) set(id string, steps []store.Step, samples []store.ContextSample, calls []store.ProviderCall) {
	*a = agentView{id: id, loaded: true, steps: steps, samples: samples, calls: map[int]map[int64]store.ProviderCall{}}
	for _, pc := range calls {
		a.addCall(pc)
	}
	for _, st := range steps {
		a.stepsRow = max(a.stepsRow, st.RowID)
		for _, r := range st.Retries {
			a.stepsRow = max(a.stepsRow, r.RowID)
		}
	}
}

// apply folds the agent's new rows, calls and samples from one refresh
// and says whether its steps or its samples changed.
func (a *agentView) apply(ch *store.Changes) (steps, samples bool) {
	if !a.loaded {
		return false, false
	}
	before := len(a.steps)
	for _, row := range ch.Steps {
		if row.RunID == a.id && row.RowID > a.stepsRow {
			a.steps = store.AppendStepRows(a.steps, []store.StepRow{row})
			a.stepsRow = row.RowID
			steps = true
		}
	}
	timed := map[int]bool{}
	for _, pc := range ch.Calls {
		if pc.RunID == a.id {
			a.addCall(pc)
			timed[pc.Step] = true
			steps = true
		}
	}
	if steps {
		// A pending step completed in place counts as appended too.
		a.stampTail(timed, len(a.steps)-before+1)
	}
	for _, cs := range ch.Context {
		if cs.RunID == a.id {
			a.upsertSample(cs)
			samples = true
		}
	}
	return steps, samples
}

// addCall records a provider attempt once, whichever way it arrived.
func (a *agentView) addCall(pc store.ProviderCall) {
	if a.calls[pc.Step] == nil {
		a.calls[pc.Step] = map[int64]store.ProviderCall{}
	}
	a.calls[pc.Step][pc.RowID] = pc
}

// stampTail re-times the steps appended by a refresh (their calls often
// come first) and the steps whose calls just arrived, from the attempts
// recorded for them. It walks back from the end only as far as it must.
func (a *agentView) stampTail(timed map[int]bool, appended int) {
	lowest := int(^uint(0) >> 1)
	for n := range timed {
		lowest = min(lowest, n)
	}
	for i := len(a.steps) - 1; i >= 0; i-- {
		st := &a.steps[i]
		fresh := i >= len(a.steps)-appended
		if !fresh && st.Number < lowest {
			break
		}
		if !fresh && !timed[st.Number] {
			continue
		}
		st.At, st.Latency = time.Time{}, 0
		for _, pc := range a.calls[st.Number] {
			if pc.At.After(st.At) {
				st.At = pc.At
			}
			st.Latency += time.Duration(pc.LatencyMS) * time.Millisecond
		}
	}
}

// upsertSample takes a new turn, or a recent one whose provider count
// arrived.
func (a *agentView) upsertSample(cs store.ContextSample) {
	for i := len(a.samples) - 1; i >= 0 && i >= len(a.samples)-16; i-- {
		if a.samples[i].RowID == cs.RowID {
			a.samples[i] = cs
			return
		}
	}
	if n := len(a.samples); n > 0 && cs.RowID < a.samples[n-1].RowID {
		return // already loaded with the agent
	}
	a.samples = append(a.samples, cs)
}
