package tui

import (
	"time"

	"github.com/vigil-run/vigil/internal/rev"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// windowSteps is how many of a run's steps the explorer holds whole when the
// source reads stretches of a timeline (store.StepRanger): a run of at most
// this many is held whole; of a longer run, a window of about this many near
// the screen (at most twice as many between trims), and every step's key
// (stepEntry, packed: a few bytes, or none, once its chunk is full). A variable so tests can make small runs windowed.
var windowSteps = 2048

// stepEntry is what the explorer keeps of every step of the shown agent: its
// key, and where its rows start, so any stretch of steps can be read again
// by row range.
type stepEntry struct {
	row    int64  // the step's RowID: the selection key
	back   uint32 // row minus the step's first row; pendingBit: not committed yet
	number int32
}

const pendingBit = 1 << 31

func entryOf(st store.Step) stepEntry {
	first := st.RowID
	for _, r := range st.Retries {
		first = min(first, r.RowID)
	}
	e := stepEntry{row: st.RowID, back: uint32(min(st.RowID-first, pendingBit-1)), number: int32(st.Number)}
	if st.Pending {
		e.back |= pendingBit
	}
	return e
}

func (e stepEntry) fields() [packFields]int64 {
	return [packFields]int64{e.row, int64(e.back), int64(e.number)}
}

func (stepEntry) withFields(f [packFields]int64) stepEntry {
	return stepEntry{row: f[0], back: uint32(f[1]), number: int32(f[2])}
}

func (e stepEntry) first() int64  { return e.row - int64(e.back&^pendingBit) }
func (e stepEntry) pending() bool { return e.back&pendingBit != 0 }

// agentView is the agent the timeline and the drift pane show: its steps,
// folded forward from each refresh and timed by its provider calls, and
// its context samples. Only the explorer folds a timeline (tail prints
// rows as they come, show reads one picture), so it lives here. It is the
// timeline's views.TimelineSteps.
type agentView struct {
	rev rev.Rev // bumped by every change to what the timeline draws from it (Rev)

	id       string
	loaded   bool
	ranged   bool                // the source reads stretches: a long run is held as a window
	index    *chunked[stepEntry] // every step's key, in order
	stepsRow int64               // the highest step row folded into index
	win      []store.Step        // steps winLo.. held whole
	winLo    int
	extra    map[int]store.Step // steps held whole outside win (a filter's rows)
	last     store.Step         // the newest step, always whole (a commit may complete it in place)
	complete bool               // win holds every step
	facets   *views.StepFacets
	samples  *sampleLog
	calls    map[int]map[int64]store.ProviderCall // provider attempts by step, by row: they time its steps
	// policyOnly is the step pane of a run with no step rows but policy
	// events (policy_only.go); nil otherwise.
	policyOnly *store.StepDetail
}

// want starts showing an agent whose rows are on their way.
func (a *agentView) want(id string) {
	*a = agentView{id: id}
	a.rev.Bump()
}

// Rev is the steps' revision: it moves with every change to them, so the
// timeline that draws from them keeps its drawing until it does.
func (a *agentView) Rev() uint64 { return a.rev.Rev() }

// set shows an agent: its steps held whole from winLo on (all of them when
// winLo is 0 and index is nil), the keys of all, their facets, its context
// samples and the provider calls of the steps held.
func (a *agentView) set(id string, ranged bool, index *chunked[stepEntry], facets *views.StepFacets, winLo int, steps []store.Step,
	samples []store.ContextSample, calls []store.ProviderCall) {
	*a = agentView{id: id, loaded: true, ranged: ranged, index: index, win: steps, winLo: winLo, facets: facets,
		samples: newSampleLog(id, samples), calls: map[int]map[int64]store.ProviderCall{}}
	a.rev.Bump()
	if a.index == nil {
		a.index = &chunked[stepEntry]{}
		for _, st := range steps {
			a.index.Append(entryOf(st))
		}
	}
	if a.facets == nil {
		a.facets = views.NewStepFacets(steps)
	}
	a.complete = winLo == 0 && len(steps) == a.index.Len()
	for _, pc := range calls {
		a.addCall(pc)
	}
	for _, st := range steps {
		a.stepsRow = max(a.stepsRow, st.RowID)
		for _, r := range st.Retries {
			a.stepsRow = max(a.stepsRow, r.RowID)
		}
	}
	if len(steps) > 0 {
		a.last = steps[len(steps)-1]
	}
}

// Len is how many steps the agent has.
func (a *agentView) Len() int { return a.index.Len() }

// Step is step i, whole when it is in memory, else its key.
func (a *agentView) Step(i int) (store.Step, bool) {
	if i >= a.winLo && i < a.winLo+len(a.win) {
		return a.win[i-a.winLo], true
	}
	if i == a.index.Len()-1 {
		return a.last, true
	}
	if st, ok := a.extra[i]; ok {
		return st, true
	}
	e := a.index.At(i)
	return store.Step{RowID: e.row, RunID: a.id, Number: int(e.number), Pending: e.pending()}, false
}

// Complete says every step is held whole.
func (a *agentView) Complete() bool { return a.complete }

// Facets counts what every step holds.
func (a *agentView) Facets() *views.StepFacets {
	if a.facets == nil {
		a.facets = views.NewStepFacets(nil)
	}
	return a.facets
}

// winEnd is the index after the window's last step.
func (a *agentView) winEnd() int { return a.winLo + len(a.win) }

// grown is what a refresh did to the agent's steps: fresh are steps from
// on (the newest again, when it changed in place, then the new ones).
type grown struct {
	had, from int
	fresh     []store.Step
}

// apply folds the agent's new rows, calls and samples from one refresh
// and says whether its steps or its samples changed. Its work is O(new
// rows): the newest step is refolded with them, the window grows only
// while it holds the newest step.
func (a *agentView) apply(ch *store.Changes) (steps bool, g grown, samples bool) {
	if !a.loaded {
		return false, grown{}, false
	}
	defer func() {
		if steps || samples {
			a.rev.Bump()
		}
	}()
	// Calls alone re-time steps held: nothing grew (a zero grown would say
	// every step is new).
	g = grown{had: a.index.Len(), from: a.index.Len()}
	rows := a.newRows(ch.Steps)
	timed := map[int]bool{}
	for _, pc := range ch.Calls {
		if pc.RunID == a.id {
			a.addCall(pc)
			timed[pc.Step] = true
			steps = true
		}
	}
	if len(rows) > 0 {
		steps = true
		g = a.fold(rows)
	}
	if len(timed) > 0 {
		a.stamp(timed)
	}
	for _, cs := range ch.Context {
		if cs.RunID == a.id {
			a.samples.upsert(cs)
			samples = true
		}
	}
	return steps, g, samples
}

// newRows are the agent's rows among a refresh's, past those folded. A
// refresh of the one run growing brings nothing else: its rows are taken
// as they are, not copied.
func (a *agentView) newRows(all []store.StepRow) []store.StepRow {
	mine, last := true, a.stepsRow
	for _, row := range all {
		mine = mine && row.RunID == a.id && row.RowID > last
		last = row.RowID
	}
	if mine {
		a.stepsRow = max(a.stepsRow, last)
		return all
	}
	var rows []store.StepRow
	for _, row := range all {
		if row.RunID == a.id && row.RowID > a.stepsRow {
			rows = append(rows, row)
			a.stepsRow = row.RowID
		}
	}
	return rows
}

// fold folds new rows onto the newest step.
func (a *agentView) fold(rows []store.StepRow) grown {
	n := a.index.Len()
	from := max(n-1, 0)
	tail := make([]store.Step, 0, 1+len(rows)) // a row is at most a step
	if n > 0 {
		tail = append(tail, a.last)
		a.facets.Remove(a.last)
	}
	tail = store.AppendStepRows(tail, rows)
	for i := range tail {
		a.time(&tail[i]) // before they are copied into the window
	}
	a.index.Truncate(from)
	for _, st := range tail {
		a.index.Append(entryOf(st))
		a.facets.Add(st)
	}
	a.last = tail[len(tail)-1]
	if a.complete || (a.winEnd() == n && a.winLo <= from) {
		a.win = append(a.win[:from-a.winLo], tail...)
	}
	if a.ranged && a.complete && a.index.Len() > windowSteps {
		a.complete = false // too long to hold whole now: a window of it from here on
	}
	return grown{had: n, from: from, fresh: tail}
}

// addCall records a provider attempt once, whichever way it arrived.
func (a *agentView) addCall(pc store.ProviderCall) {
	if a.calls[pc.Step] == nil {
		a.calls[pc.Step] = map[int64]store.ProviderCall{}
	}
	a.calls[pc.Step][pc.RowID] = pc
}

// stamp re-times the steps held whose calls just arrived, from the attempts
// recorded for them (fold times the steps it folds: their calls often come
// first). It walks back from the window's end only as far as it must.
func (a *agentView) stamp(timed map[int]bool) {
	lowest := int(^uint(0) >> 1)
	for n := range timed {
		lowest = min(lowest, n)
	}
	for i := len(a.win) - 1; i >= 0; i-- {
		st := &a.win[i]
		if st.Number < lowest {
			break
		}
		if timed[st.Number] {
			a.time(st)
		}
	}
	if timed[a.last.Number] {
		a.time(&a.last)
	}
}

func (a *agentView) time(st *store.Step) {
	st.At, st.Latency = time.Time{}, 0
	for _, pc := range a.calls[st.Number] {
		if pc.At.After(st.At) {
			st.At = pc.At
		}
		st.Latency += time.Duration(pc.LatencyMS) * time.Millisecond
	}
}

// trim keeps the window near the steps shown ([from, to)) once it has grown
// to twice its size k, and drops what else is held whole: the memory held
// is bounded by k, whatever the run's length.
func (a *agentView) trim(from, to, k int) {
	if a.complete || !a.ranged {
		return
	}
	held := [4]int{len(a.win), a.winLo, len(a.extra), len(a.calls)}
	defer func() {
		if held != [4]int{len(a.win), a.winLo, len(a.extra), len(a.calls)} {
			a.rev.Bump()
		}
	}()
	if len(a.win) > 2*k {
		center := (from + to) / 2
		lo := max(min(center-k/2, a.winEnd()-k), a.winLo)
		if to <= a.winLo || from >= a.winEnd() {
			lo = a.winEnd() - k // nothing shown is in it: keep its newest
		}
		a.win = append([]store.Step(nil), a.win[lo-a.winLo:lo-a.winLo+k]...)
		a.winLo = lo
	}
	if len(a.extra) > 2*k {
		a.extra = nil
	}
	if len(a.calls) > 2*k && a.index.Len() > k {
		oldest := int(a.index.At(a.index.Len() - k).number)
		for n := range a.calls {
			if n < oldest && (len(a.win) == 0 || n < a.win[0].Number) {
				delete(a.calls, n)
			}
		}
	}
}

// take puts steps read by range where they belong: a stretch from lo as the
// window, or single steps (a filter's rows) beside it. A read whose steps
// are not the ones the index has there (the run was rewound) is dropped.
func (a *agentView) take(lo int, steps []store.Step, sparse []int) bool {
	a.rev.Bump()
	if sparse != nil {
		if a.extra == nil {
			a.extra = map[int]store.Step{}
		}
		for k, i := range sparse {
			if i >= a.index.Len() || a.index.At(i).row != steps[k].RowID {
				return false
			}
			a.extra[i] = steps[k]
		}
		return true
	}
	for k, st := range steps {
		if lo+k >= a.index.Len() || a.index.At(lo+k).row != st.RowID {
			return false
		}
	}
	if lo+len(steps) == a.index.Len() && len(steps) > 0 {
		steps[len(steps)-1] = a.last // the newest may have changed since it was read
	}
	a.win, a.winLo = steps, lo
	return true
}
