package tui

import (
	"fmt"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// The facts beyond steps: the run summary overlay, and what the open tree
// holds open now (the live strip and the tree's extras), read from the
// store's optional capabilities (store/facts.go). A source without one
// shows nothing of it, and never an error.

// liveEvents is how many stream events per agent are kept: enough to tell
// what it is doing now, and a run of streamed chunks.
const liveEvents = 64

// live is the open tree's activity as last read.
type live struct {
	root    string
	act     store.Activity
	events  map[string][]store.RunEvent // each agent's newest stream events, oldest first
	after   int64                       // the stream's cursor: the newest event read
	loading bool
	again   bool // asked for again while a read ran
}

type activityMsg struct {
	from
	root string
	act  store.Activity
	err  error
}

func loadActivity(src source, root string, ids []string, after int64) tea.Cmd {
	if !src.Capabilities().Has(store.CapActivity) {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		act, err := src.Activity(ctx, store.ActivityQuery{RunIDs: ids, After: after, PerRun: liveEvents})
		return activityMsg{from: from{src.gen}, root: root, act: act, err: err}
	}
}

// wantActivity reads the open tree's activity again, unless a read is
// under way (then once more when it is done). A tree that has ended holds
// nothing open: it is read once, when opened.
func (m *Model) wantActivity(opened bool) tea.Cmd {
	root := m.st.root
	if root == "" {
		return nil
	}
	if !m.src.Capabilities().Has(store.CapActivity) {
		return nil
	}
	if !opened && m.treeEnded(root) {
		return nil
	}
	if m.live.root != root {
		m.live = live{root: root, events: map[string][]store.RunEvent{}}
	}
	if m.live.loading {
		m.live.again = true
		return nil
	}
	m.live.loading = true
	return loadActivity(m.src, root, m.st.model.Subtree(root), m.live.after)
}

// afterRefresh reads what Changes does not carry. What happens inside a
// step (the live stream, plans, queues, messages, processes) is read with
// every refresh, found or not (a stream event moves the store's
// data_version like any write), while the open tree runs; the open summary
// is read again when the store changed.
func (m *Model) afterRefresh(msg changesMsg) tea.Cmd {
	if msg.err != nil || msg.ch == nil || msg.ch.Reset {
		return nil
	}
	cmds := []tea.Cmd{m.wantActivity(false)}
	if !msg.ch.Empty() {
		m.showSummary()
		cmds = append(cmds, m.rereadSummary())
	}
	return tea.Batch(cmds...)
}

// treeEnded reports whether every agent of a tree has ended.
func (m *Model) treeEnded(root string) bool {
	for _, id := range m.st.model.Subtree(root) {
		if r, ok := m.st.model.Run(id); ok && !r.Ended() {
			return false
		}
	}
	return true
}

func (m *Model) onActivity(msg activityMsg) tea.Cmd {
	if msg.root != m.live.root {
		return nil
	}
	m.live.loading = false
	if msg.err != nil {
		m.fail(msg.err)
		return nil
	}
	m.live.act = msg.act
	// The read covered the stream up to Through, whoever wrote it: the
	// next reads only what comes after.
	m.live.after = max(m.live.after, msg.act.Through)
	for _, e := range msg.act.Events {
		evs := append(m.live.events[e.RunID], e)
		if len(evs) > liveEvents {
			evs = evs[len(evs)-liveEvents:]
		}
		m.live.events[e.RunID] = evs
		m.live.after = max(m.live.after, e.ID)
		// A stream event is a write Changes does not carry: "updated" is
		// the newest row time the store holds.
		if e.At.After(m.lastChange) {
			m.lastChange = e.At
		}
	}
	m.refreshTree()
	if m.live.again {
		m.live.again = false
		return m.wantActivity(false)
	}
	return nil
}

// doings is what the open tree's unfinished agents are doing now.
func (m *Model) doings() []views.Doing {
	var out []views.Doing
	for _, id := range m.st.model.Subtree(m.st.root) {
		if len(m.live.events[id]) == 0 {
			continue // before the run's copy: most of a 100 k tree has said nothing
		}
		r, ok := m.st.model.Run(id)
		if !ok || r.Ended() {
			continue
		}
		if d, ok := views.NowDoing(m.live.events[id]); ok {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Since.After(out[j].Since) })
	return out
}

// nodeExtras puts what the store records an agent holding open on its node.
func (m *Model) nodeExtras(n *views.AgentNode) {
	if m.live.root != m.st.root {
		return
	}
	a, id := m.live.act, n.Run.ID
	n.Todos, n.Unread, n.Processes = a.Todos[id], len(a.Unread[id]), len(a.Processes[id])
}

// queued is the children queued under each agent of the open tree.
func (m *Model) queued() map[string][]store.QueuedAgent {
	if m.live.root != m.st.root {
		return nil
	}
	return m.live.act.Queued
}

// The run summary overlay.

type summaryMsg struct {
	from
	id       string
	calls    []store.ProviderCall
	requests []store.Request
	facts    *store.RunFacts
	err      error
}

func loadSummary(src source, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		msg := summaryMsg{from: from{src.gen}, id: id}
		if msg.calls, msg.err = src.ProviderCalls(ctx, id); msg.err != nil {
			return msg
		}
		if msg.requests, msg.err = src.Requests(ctx, false, id); msg.err != nil {
			return msg
		}
		if src.Capabilities().Has(store.CapFacts) {
			f, err := src.RunFacts(ctx, id)
			msg.facts, msg.err = &f, err
		}
		return msg
	}
}

// openSummary opens the overlay on the run the focused pane points at: the
// selected run in Runs, the selected agent in Agents, else the agent the
// timeline shows.
func (m *Model) openSummary() tea.Cmd {
	id := m.st.agent.id
	switch m.focus {
	case paneRuns:
		if it, ok := m.runs.Selected(); ok {
			id = it.Run.ID
		}
	case paneAgents:
		if sel := m.tree.Selected(); sel != "" {
			id = sel
		}
	}
	if _, ok := m.st.model.Run(id); !ok {
		return nil
	}
	m.summaryOn = true
	m.summary.Want(id)
	m.summaryRead = summaryRead{id: id, loading: true, at: time.Now()}
	return loadSummary(m.src, id)
}

// summaryRead is the overlay's read of the store: what was read last, and
// whether a read is under way.
type summaryRead struct {
	id        string
	msg       *summaryMsg
	loading   bool
	again     bool
	at        time.Time // when the last read was asked for
	scheduled bool      // a read is due after summaryEvery
}

// summaryEvery is how often the open summary is read again while the store
// changes: a run's facts are read from many tables, and a busy run commits
// many times a second. (A variable: tests read at once.)
var summaryEvery = time.Second

// summaryDueMsg asks for the summary's next read, once summaryEvery has
// passed since the last.
type summaryDueMsg struct{ id string }

func (m *Model) onSummary(msg summaryMsg) tea.Cmd {
	if !m.summaryOn || msg.id != m.summaryRead.id {
		return nil
	}
	m.summaryRead.loading = false
	if msg.err != nil {
		m.summary.Fail(msg.err.Error())
		return nil
	}
	m.summaryRead.msg = &msg
	m.showSummary()
	if m.summaryRead.again {
		m.summaryRead.again = false
		return m.rereadSummary()
	}
	return nil
}

// rereadSummary reads the open summary again after the store changed: at
// once, or when summaryEvery has passed since the last read.
func (m *Model) rereadSummary() tea.Cmd {
	sr := &m.summaryRead
	if !m.summaryOn || sr.scheduled {
		return nil
	}
	if sr.loading {
		sr.again = true
		return nil
	}
	if wait := summaryEvery - time.Since(sr.at); wait > 0 {
		sr.scheduled = true
		id := sr.id
		return tea.Tick(wait, func(time.Time) tea.Msg { return summaryDueMsg{id: id} })
	}
	sr.loading, sr.at = true, time.Now()
	return loadSummary(m.src, sr.id)
}

func (m *Model) onSummaryDue(msg summaryDueMsg) tea.Cmd {
	if !m.summaryOn || msg.id != m.summaryRead.id {
		return nil
	}
	m.summaryRead.scheduled = false
	return m.rereadSummary()
}

// showSummary lays the summary out from the run model as it stands and
// the store's facts as last read.
func (m *Model) showSummary() {
	msg := m.summaryRead.msg
	if !m.summaryOn || msg == nil {
		return
	}
	md, id, now := m.st.model, msg.id, m.now()
	r, ok := md.Run(id)
	if !ok {
		m.summary.Fail(fmt.Sprintf("run %s is no longer in the store", store.DisplayID(id)))
		return
	}
	lease, heldBy := md.Lease(id)
	s := &views.RunSummary{Run: r, State: md.State(id, now), Liveness: md.Liveness(id, now), Lease: lease, LeaseHeldBy: heldBy,
		Own: md.Agent(id), Tree: md.Tree(id), Agents: md.Agents(id), Calls: msg.calls, Requests: msg.requests, Facts: msg.facts}
	s.Elapsed, s.HasElapsed = md.Duration(id, now)
	m.summary.Set(s)
}

// closeSummary closes the overlay.
func (m *Model) closeSummary() {
	m.summaryOn = false
	m.summaryRead = summaryRead{}
}

// lastWrite is when the store says it was last written (zero when it
// cannot say), read with the first load.
func lastWrite(src source) time.Time {
	if !src.Capabilities().Has(store.CapWriteClock) {
		return time.Time{}
	}
	ctx, cancel := ioCtx()
	defer cancel()
	t, err := src.LastWrite(ctx)
	if err != nil {
		return time.Time{}
	}
	return t
}

// stepRev is what the detail of a step was read at: the step's row, the
// rows folded under it and the provider attempts recorded for it. The
// detail is read again when any of them moves, so it never shows fewer
// attempts or retries than the timeline does.
func (m *Model) stepRev(st store.Step) string {
	return fmt.Sprintf("%d/%d/%t/%d", st.RowID, len(st.Retries), st.Pending, len(m.st.agent.calls[st.Number]))
}
