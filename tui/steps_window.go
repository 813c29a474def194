package tui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// A long run's timeline is held as a window (agent.go): these are the reads
// that fill it from the store by row range — the agent's load, the stretch
// the screen moves to, and a search or a filter streamed through every
// step — each a command whose reply the model folds in.

// stepFolder folds a run's rows as a stream into whole steps, handing each
// on (with its index) once no later row can change it.
type stepFolder struct {
	buf  []store.Step
	n    int // steps handed on
	emit func(i int, st store.Step)
}

func (f *stepFolder) rows(rows []store.StepRow) {
	f.buf = store.AppendStepRows(f.buf, rows)
	if len(f.buf) < 2 {
		return
	}
	for _, st := range f.buf[:len(f.buf)-1] {
		f.emit(f.n, st)
		f.n++
	}
	f.buf = append(f.buf[:0], f.buf[len(f.buf)-1])
}

func (f *stepFolder) finish() {
	for _, st := range f.buf {
		f.emit(f.n, st)
		f.n++
	}
	f.buf = nil
}

// stampRange times steps read by range from their provider calls.
func stampRange(ctx context.Context, sr store.StepRanger, runID string, steps []store.Step) ([]store.ProviderCall, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	lo, hi := steps[0].Number, steps[0].Number
	for _, st := range steps {
		lo, hi = min(lo, st.Number), max(hi, st.Number)
	}
	calls, err := sr.ProviderCallsFor(ctx, runID, lo, hi)
	if err != nil {
		return nil, err
	}
	store.StampSteps(steps, calls)
	return calls, nil
}

// loadRanged reads an agent through a StepRanger: every step's key and
// facets in one streamed pass, its newest windowSteps steps whole.
func loadRanged(ctx context.Context, sr store.StepRanger, m *agentMsg) error {
	idx := &chunked[stepEntry]{}
	facets := views.NewStepFacets(nil)
	var tail []store.Step
	f := stepFolder{emit: func(i int, st store.Step) {
		idx.Append(entryOf(st))
		facets.Add(st)
		tail = append(tail, st)
		if len(tail) >= 2*windowSteps {
			tail = append(tail[:0:0], tail[len(tail)-windowSteps:]...)
		}
	}}
	err := sr.EachStepRow(ctx, m.runID, 0, 0, func(rows []store.StepRow) error {
		f.rows(rows)
		return nil
	})
	if err != nil {
		return err
	}
	f.finish()
	if len(tail) > windowSteps {
		tail = append(tail[:0:0], tail[len(tail)-windowSteps:]...)
	}
	calls, err := stampRange(ctx, sr, m.runID, tail)
	if err != nil {
		return err
	}
	m.index, m.facets, m.winLo, m.steps, m.calls = idx, facets, idx.Len()-len(tail), tail, calls
	return nil
}

// stepsMsg is a stretch of an agent's steps read by range: from lo on, or
// the steps at sparse.
type stepsMsg struct {
	from
	runID  string
	lo     int
	sparse []int
	steps  []store.Step
	err    error
}

// rowsOf is the row range that holds steps lo..hi-1 of the agent.
func (a *agentView) rowsOf(lo, hi int) (int64, int64) {
	to := a.stepsRow
	if hi < a.index.Len() {
		to = a.index.At(hi).first() - 1
	}
	return a.index.At(lo).first(), to
}

// loadSteps reads the steps need names (ascending): the stretch around
// them, or when they lie far apart (a filter's rows), those steps alone.
func (m *Model) loadSteps(need []int) tea.Cmd {
	a := &m.st.agent
	sr, ok := m.src.Source.(store.StepRanger)
	if !ok || len(need) == 0 || m.stepsLoading {
		return nil
	}
	key := [2]int{need[0], need[len(need)-1]}
	if m.stepsFailed == key {
		return nil // read again once the screen moves, not in a loop
	}
	m.stepsLoading, m.stepsAsked = true, key
	src, runID, n, k := m.src, a.id, a.index.Len(), m.windowSize()
	first, last := need[0], need[len(need)-1]
	var sparse []int
	lo, hi := first, last+1
	if hi-lo <= k {
		center := (lo + hi) / 2
		lo = max(min(center-k/2, n-k), 0)
		hi = min(lo+k, n)
	} else {
		sparse = need
	}
	fromRow, toRow := a.rowsOf(first, last+1)
	if sparse == nil {
		fromRow, toRow = a.rowsOf(lo, hi)
	}
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		msg := stepsMsg{from: from{src.gen}, runID: runID, lo: lo, sparse: sparse}
		want := map[int]bool{}
		for _, i := range sparse {
			want[i] = true
		}
		start := lo
		if sparse != nil {
			start = first
		}
		f := stepFolder{n: start, emit: func(i int, st store.Step) {
			if sparse == nil || want[i] {
				msg.steps = append(msg.steps, st)
			}
		}}
		msg.err = sr.EachStepRow(ctx, runID, fromRow, toRow, func(rows []store.StepRow) error {
			f.rows(rows)
			return nil
		})
		if msg.err == nil {
			f.finish()
			_, msg.err = stampRange(ctx, sr, runID, msg.steps)
		}
		return msg
	}
}

func (m *Model) onSteps(msg stepsMsg) tea.Cmd {
	m.stepsLoading = false
	a := &m.st.agent
	if msg.runID != a.id || !a.loaded {
		return nil
	}
	if msg.err != nil {
		m.fail(msg.err)
		m.stepsFailed = m.stepsAsked
		return nil
	}
	m.stepsFailed = [2]int{-1, -1}
	if msg.sparse != nil && len(msg.steps) != len(msg.sparse) || !a.take(msg.lo, msg.steps, msg.sparse) {
		// The run is not what the keys say (rewound under the explorer):
		// read it again.
		return m.reloadAgent()
	}
	return m.wantDetailIfWhole()
}

// reloadAgent reads the shown agent again from the start.
func (m *Model) reloadAgent() tea.Cmd {
	id := m.st.agent.id
	m.st.agent.loaded = false
	return m.selectAgent(id)
}

// scanMsg is a search or a filter streamed through every step of an agent.
type scanMsg struct {
	from
	runID string
	scan  *views.StepScan
	err   error
}

// runScan streams the agent's rows (through its newest now) into a scan.
func (m *Model) runScan(sc *views.StepScan) tea.Cmd {
	sr, ok := m.src.Source.(store.StepRanger)
	if !ok {
		return nil
	}
	if m.scanCancel != nil {
		m.scanCancel() // its query or filter has been replaced
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.scanCancel = cancel
	src, runID, to := m.src, m.st.agent.id, m.st.agent.stepsRow
	return func() tea.Msg {
		defer cancel()
		msg := scanMsg{from: from{src.gen}, runID: runID, scan: sc}
		if to == 0 {
			return msg
		}
		f := stepFolder{emit: sc.Add}
		msg.err = sr.EachStepRow(ctx, runID, 0, to, func(rows []store.StepRow) error {
			f.rows(rows)
			return nil
		})
		f.finish()
		return msg
	}
}

func (m *Model) onScan(msg scanMsg) tea.Cmd {
	if msg.runID != m.st.agent.id {
		return nil
	}
	if msg.err != nil {
		// A scan cancelled because its query or filter was replaced is no
		// failure; one the timeline still waits for is.
		if m.timeline.ScanFailed(msg.scan.Seq) && !errors.Is(msg.err, context.Canceled) {
			m.fail(msg.err)
		}
		return nil
	}
	return m.act(m.timeline.ScanDone(msg.scan))
}

// windowSize is how many steps the window holds: windowSteps, and never
// fewer than the rows near the screen (Timeline.Need asks for three
// screens' worth), so what one read brings the next trim keeps.
func (m *Model) windowSize() int { return max(windowSteps, 4*m.timeline.Height()) }

// stepWork is what the timeline needs read after a message: the steps near
// the screen not in memory, and a scan it asked for. It also trims the
// window to what is near the screen.
func (m *Model) stepWork() tea.Cmd {
	a := &m.st.agent
	if !a.loaded || a.id != m.timeline.RunID() {
		return nil
	}
	from, to := m.timeline.Around()
	a.trim(from, to, m.windowSize())
	var cmds []tea.Cmd
	if sc := m.timeline.Scan(); sc != nil {
		cmds = append(cmds, m.runScan(sc))
	}
	if need := m.timeline.Need(); len(need) > 0 {
		cmds = append(cmds, m.loadSteps(need))
	}
	return tea.Batch(cmds...)
}

// wantDetailIfWhole reads the selected step's detail again once its row is
// in memory (the detail shows the step as the timeline folds it).
func (m *Model) wantDetailIfWhole() tea.Cmd {
	if st, ok := m.timeline.SelectedWhole(); ok && st.RowID == m.detailWant && m.stepRev(st) != m.detailRev {
		return m.wantDetail(false)
	}
	return nil
}
