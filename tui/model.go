// Package tui is vigil's one Bubble Tea model: it owns the in-memory state
// of the store, lays the panes out, routes keys and mouse to them, and turns
// what they ask for into commands. Data flows one way: the watcher wakes it,
// a command reads the store's Changes, the state folds them in (the runs
// into the run model the command line reads too, package runmodel), the
// panes redraw. Decisions flow back as commands whose results come as messages.
package tui

import (
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
	"github.com/vigil-run/vigil/watch"
)

// Options configure the explorer.
type Options struct {
	Source store.Source
	// Reopen opens the store again after it was replaced or deleted and
	// came back (nil: vigil stays on the old handle).
	Reopen func() (store.Source, error)
	// Poll forces polling at this interval instead of file events.
	Poll time.Duration
	// NoWatch disables the watcher (tests drive refreshes themselves).
	NoWatch bool
	// NoColor draws without colour (NO_COLOR).
	NoColor bool
	// Now is the clock (tests fix it).
	Now func() time.Time
	// Run, when set, is the run to open first (else the newest live one).
	Run string
	// StoreLabel names the store in the status bar (default: its path).
	StoreLabel string
	// Who says who is watching and what they may do (vigil serve: the
	// key's name and role). The status bar never drops it.
	Who string
	// Decisions is who decides through this explorer, by which channel,
	// recorded in which audit log (internal/decision). Nil: the person at
	// this terminal, in the per-user log ($XDG_STATE_HOME/vigil).
	Decisions *decision.Maker
	// NoTick stops the once-a-second redraw (tests and benchmarks move
	// the clock themselves).
	NoTick bool
	// Notify says which notices a request that arrives gives (notify.go).
	Notify Notify
	// Colors is the terminal's colour profile for a program that writes
	// its frames itself (vigil serve): the theme's colours are made the
	// terminal's own. Unknown (0): true colour, brought down by Bubble
	// Tea's renderer.
	Colors colorprofile.Profile
	// Look is the user's theme and keys (config.go).
	Look Look
	// Trouble, when set, is asked at each frame for a problem outside the
	// store to keep in the status bar ("" when none): the demo's export
	// failing (cli's demo --otel).
	Trouble func() string
	// Wakeups, when set, replaces the model's own file watcher: vigil serve
	// wakes every session from one shared tail of the store.
	Wakeups func() (watch.Wakeup, error)
}

// Model is the root model.
type Model struct {
	opt  Options
	src  source     // the store, and its generation (a reopen starts the next)
	env  *views.Env // the theme, keys and clock every pane shares
	dark bool
	now  func() time.Time

	w, h   int
	focus  pane
	right  pane // the right column's pane in the compact layout
	help   bool
	rects  [paneCount]rect // where each pane is on screen (see relayout)
	order  []pane          // the panes on screen, left to right
	helpAt rect            // where the help overlay goes
	zoomed bool            // the focused pane has the whole screen (fit.go)
	want   [3]int          // the rows the left column's panes asked for at the last layout

	st     *state
	cursor store.Cursor
	loaded bool
	first  firstPageState // drawn from the newest runs, the rest on its way (firstpage.go)

	panes     [paneCount]views.Pane // the panes below, indexed by pane
	runs      *views.Runs
	tree      *views.Tree
	treeLines treeLines // the open tree laid out, kept while its shape holds
	timeline  *views.Timeline
	detail    *views.Detail
	drift     *views.Drift
	approvals *views.Approvals
	helpBox   *views.Help

	summary     *views.Summary // the run summary overlay (facts.go)
	summaryOn   bool
	summaryAt   rect
	summaryRead summaryRead
	live        live // the open tree's activity: the live strip and the tree's extras

	watcher      watch.Wakeup
	watchNote    string
	closed       bool // quitting: the watcher is gone on purpose
	refreshing   bool
	again        bool // a refresh was asked for while one ran
	lastChange   time.Time
	itemsOffline string          // the stores offline when the lists were built (offlineStores)
	runItems     []views.RunItem // the runs pane's rows, refilled by refreshItems
	built        itemsBuilt      // what runItems were built from (onClock)
	rowReads     int             // run rows read from the model for the run list (tests)
	problem      string          // the last error, one line, in the status bar
	noticeText   string          // a confirmation (copied, opened), shown a moment (open.go)
	noticeAt     time.Time

	// What is shown is not the store as it is now while stale says why
	// (the store is gone, cannot be read, or must be opened again): the
	// status bar says so instead of calling anything live.
	stale      string
	staleCause staleCause
	reopenWant bool // the store must be opened again (replaced, reset, back after gone)
	reopening  bool // a reopen is running
	tries      int  // failed reopens or reads in a row: the back-off of the next retry

	problems problems // what the source reads without, as of the last read (problems.go)

	headless time.Duration // driven without a terminal (Settle): timers longer than this never fire

	detailSeq int
	// The timeline's reads by range (steps_window.go): a stretch is being
	// read, and the cancel of the scan out.
	stepsLoading bool
	stepsAsked   [2]int // the first and last step of the read out
	stepsFailed  [2]int // those of the last read that failed: not asked again until the screen moves
	scanCancel   func()
	detailWant   int64
	detailRev    string // the revision of the step the detail was asked at (stepRev)

	itemsAt time.Time // when the run list was last rebuilt

	drawn     [paneCount]paneDrawn // each pane's last drawing
	paneDraws [paneCount]int       // how many times each was drawn (tests)
	frames    int                  // how many frames were drawn (tests)
	queue     []views.ApprovalItem // the queue as last handed to its pane (queueMoves)

	alert     alerts // requests already announced, the terminal's focus (notify.go)
	jump      *jump  // where the next-waiting key jumped from (jump.go)
	quitAsked bool   // a quit with unsent text waits for a second one (quit.go)
	auditPath string // the per-user decision log, which names who decided here (decided_by.go)

	guardWakeAt time.Time  // the end of the guard's pause a timer is set for (guard_wake.go)
	cmd         cmdline    // the command line, open in the status bar (cmdline.go)
	hints       hintsDrawn // the status bar's key hint as last drawn (status_hints.go)
}

// New builds the model around an open source.
func New(opt Options) *Model {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	auditPath := ""
	if opt.Decisions == nil {
		auditPath = localAuditPath()
		opt.Decisions = decision.Local(os.Getenv, "the explorer")
		opt.Decisions.Now = now // it judges on the clock the panes showed
	}
	m := &Model{
		opt: opt, src: source{Source: opt.Source, reading: newReadProgress(now())}, now: now, dark: true, stepsFailed: [2]int{-1, -1},
		focus: paneRuns, right: paneTimeline, auditPath: auditPath,
	}
	if dark, fixed := m.fixedBackground(); fixed {
		m.dark = dark
	}
	m.env = &views.Env{Theme: m.theme(), Keys: m.keys(), Now: now}
	m.newPanes()
	m.st = newState(m.src.Source)
	if ro, why := m.src.ReadOnly(); ro {
		m.approvals.SetReadOnly(why)
	}
	m.setReasons()
	return m
}

// Init starts loading, the watcher, the clock, and asks the terminal for
// its background colour.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{loadAll(m.src), tea.RequestBackgroundColor}
	if !m.opt.NoTick {
		cmds = append(cmds, m.tick())
	}
	if !m.opt.NoWatch {
		cmds = append(cmds, m.startWatch())
	}
	return tea.Batch(cmds...)
}

func (m *Model) startWatch() tea.Cmd {
	w, err := m.newWakeup()
	if err != nil {
		m.problem = "cannot watch the store: " + err.Error()
		return nil
	}
	m.watcher = w
	m.watchNote = ""
	return m.waitSignal(w)
}

func (m *Model) newWakeup() (watch.Wakeup, error) {
	if m.opt.Wakeups != nil {
		return m.opt.Wakeups()
	}
	spec := m.src.Watch()
	return watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Touched: spec.Touched, Depth: spec.Depth, Poll: m.opt.Poll})
}

// Close stops the watcher.
func (m *Model) Close() {
	m.closed = true
	if m.watcher != nil {
		m.watcher.Close()
		m.watcher = nil
	}
}

// Loaded reports whether the store's first load is on screen (vigil serve
// holds a session's first key until it is).
func (m *Model) Loaded() bool { return m.loaded }

// Source is the store the model reads now (after a reopen, the new one).
func (m *Model) Source() store.Source { return m.src.Source }

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.update(msg)
	// What a message changed may move the timeline to steps not in memory.
	if work := m.stepWork(); work != nil {
		cmd = tea.Batch(cmd, work)
	}
	if wake := m.guardWake(); wake != nil {
		cmd = tea.Batch(cmd, wake)
	}
	m.detail.SetPausedNote(m.timeline.PausedNote()) // reading.go
	if drawEveryMessage {
		m.render() // a frame after every message, as a terminal that keeps up gets
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.refit() // what a message changed may change the rows a pane needs
	defer m.followOffline()
	if r, ok := msg.(reply); ok && r.sourceGen() != m.src.gen {
		return m, nil // read from a source since replaced: its rows are not this one's
	}
	if cmd, ok := m.onDecisionMsg(msg); ok {
		return m, cmd
	}
	if m.onFocus(msg) {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.relayout()
		return m, nil
	case tea.BackgroundColorMsg:
		// Panes read the theme as they draw: nothing to lay out again.
		if _, fixed := m.fixedBackground(); fixed {
			return m, nil // the config says which background
		}
		m.dark = msg.IsDark()
		m.env.Theme = m.theme()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		return m, m.onPaste(msg)
	case tea.MouseClickMsg:
		return m, m.onClick(msg.Mouse())
	case tea.MouseWheelMsg:
		return m, m.onWheel(msg.Mouse())
	case tickMsg:
		m.onClock() // ages, leases, the misfire guard, counts held back
		if m.opt.NoTick {
			return m, nil
		}
		return m, m.tick()
	case loadedMsg:
		cmd := m.onLoaded(msg)
		return m, tea.Batch(cmd, m.announce())
	case restMsg:
		// Every request is in the model since the load, primed then: one
		// that arrived since comes with the refresh after the rest.
		return m, m.onRest(msg)
	case statsMsg:
		if msg.err != nil {
			m.fail(msg.err)
			return m, nil
		}
		m.first.keepStats(msg.stats)
		m.st.model.ApplyStats(msg.stats)
		m.refreshItems()
		return m, nil
	case agentMsg:
		return m, m.onAgent(msg)
	case treeEventsMsg:
		if msg.err != nil && msg.root == m.st.root {
			m.fail(fmt.Errorf("the tree's live activity: %w", msg.err)) // never an empty strip that looks quiet
		}
		if msg.err == nil && msg.root == m.st.root {
			for _, id := range m.st.model.Subtree(msg.root) {
				m.st.events[id] = nil
			}
			for _, e := range msg.events {
				m.st.events[e.RunID] = append(m.st.events[e.RunID], e)
			}
			m.refreshTree()
		}
		return m, nil
	case stepsMsg:
		return m, m.onSteps(msg)
	case scanMsg:
		return m, m.onScan(msg)
	case detailDueMsg:
		if msg.seq == m.detailSeq && m.detailWant != 0 {
			return m, loadDetail(m.src, m.timeline.RunID(), m.detailWant)
		}
		return m, nil
	case detailMsg:
		if msg.rowID == m.detailWant {
			if msg.err != nil {
				m.detail.Fail(msg.err.Error())
			} else {
				d := msg.detail
				// The step as the timeline folds it (its retries, pending or
				// not): the detail says what the timeline says.
				if st, ok := m.timeline.SelectedWhole(); ok && st.RowID == d.RowID {
					call := d.ToolCall
					d.Step, d.ToolCall = st, call
				}
				m.detail.Set(&d)
			}
		}
		return m, nil
	case openReadyMsg:
		return m, m.onOpenReady(msg)
	case openDoneMsg:
		m.onOpenDone(msg)
		return m, nil
	case activityMsg:
		return m, m.onActivity(msg)
	case summaryMsg:
		return m, m.onSummary(msg)
	case summaryDueMsg:
		return m, m.onSummaryDue(msg)
	case signalMsg:
		return m, m.onSignal(msg.sig)
	case changesMsg:
		hist := m.noteDecided(msg.ch)
		cmd := m.onChanges(msg)
		var ann tea.Cmd
		if ch := msg.ch; ch != nil && (len(ch.Requests) > 0 || len(ch.Runs) > 0 || ch.LeasesChanged) {
			ann = m.announce() // only requests, runs and leases change what waits on whom
		}
		return m, tea.Batch(cmd, m.afterRefresh(msg), m.wantChannel(), hist, ann)
	case decidedMsg:
		m.approvals.Result(msg.decision, msg.result, msg.err)
		if msg.gen != m.src.gen {
			return m, nil
		}
		if msg.err == nil && (msg.result.Won || msg.result.Decision != "") {
			m.st.model.Decided(msg.decision.Key)
			m.refreshItems()
		}
		return m, tea.Batch(m.askRefresh(), m.wantHistory())
	case reopenedMsg:
		m.reopening = false
		if msg.err != nil {
			// Tried again on the next signal from the watcher, and after a
			// back-off if none comes.
			m.markStale(staleReopen, "store unavailable: "+msg.err.Error())
			return m, m.retryLater()
		}
		m.src.Close()
		m.src = source{Source: msg.src, gen: m.src.gen + 1, reading: newReadProgress(m.now())}
		m.st = newState(m.src.Source)
		m.live, m.summaryRead = live{}, summaryRead{}
		m.loaded, m.cursor, m.first = false, nil, firstPageState{}
		m.refreshing, m.again = false, false // a refresh in flight on the old source is dropped on arrival
		m.reopenWant, m.tries = false, 0
		m.clearStale(staleReopen)
		m.markStale(staleLoad, "loading the store again")
		ro, why := m.src.ReadOnly()
		if !ro {
			why = ""
		}
		m.approvals.SetReadOnly(why)
		m.setReasons()
		cmds := []tea.Cmd{loadAll(m.src)}
		if m.watcher != nil {
			// The watcher's probe reads the old source's connection: watch
			// with the new one's.
			m.watcher.Close()
			m.watcher = nil
			cmds = append(cmds, m.startWatch())
		}
		return m, tea.Batch(cmds...)
	case retryMsg:
		if msg.try != m.tries {
			return m, nil // something since has retried already
		}
		if m.reopenWant {
			return m, m.tryReopen()
		}
		if m.first.partial {
			return m, loadRest(m.src, m.cursor)
		}
		if m.stale != "" {
			return m, m.askRefresh()
		}
		return m, nil
	}
	return m, nil
}

// staleCause is why what is shown is not current.
type staleCause int

const (
	staleNone   staleCause = iota
	staleRead              // the last read failed (the store is damaged, locked, …)
	staleLoad              // the store was opened again and is loading
	staleGone              // the store is not at its path
	staleReopen            // it must be opened again and that failed (or has not happened yet)
)

// markStale says what is shown is not current, and why. A later cause
// does not hide a graver one (gone, unavailable) with a lesser one.
func (m *Model) markStale(c staleCause, why string) {
	if c < m.staleCause {
		return
	}
	m.stale, m.staleCause = why, c
}

// clearStale ends a staleness of cause c or a lesser one: the thing that
// caused it is over.
func (m *Model) clearStale(c staleCause) {
	if m.staleCause <= c {
		m.stale, m.staleCause = "", staleNone
	}
}

// tryReopen opens the store again unless that is already under way.
func (m *Model) tryReopen() tea.Cmd {
	if m.opt.Reopen == nil || m.reopening {
		return nil
	}
	m.reopening = true
	return reopen(m.opt.Reopen)
}

// retryLater schedules the next retry of a failed reopen or read: 1 s,
// doubling to 16 s, superseded by any retry in between (every watcher
// signal retries at once).
func (m *Model) retryLater() tea.Cmd {
	m.tries++
	d := retryMin << min(m.tries-1, 4)
	try := m.tries
	return m.after(d, func(time.Time) tea.Msg { return retryMsg{try: try} })
}

const retryMin = time.Second

// NotCurrent says why what is shown is not the store as it is now ("" when
// it is).
func (m *Model) NotCurrent() string { return m.stale }

func (m *Model) fail(err error) {
	m.problem = err.Error()
}

func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	if msg.err != nil {
		m.markStale(staleRead, msg.err.Error())
		if m.opt.Reopen != nil {
			// A load that failed is a reopen that failed: the handle may be
			// on a file that is gone or half-written.
			m.reopenWant = true
			m.markStale(staleReopen, "store unavailable: "+msg.err.Error())
		}
		return m.retryLater()
	}
	m.clearStale(staleLoad)
	m.tries = 0
	m.problems = msg.problems
	now := m.now()
	// "updated" is the store's own last write, not the moment vigil read it.
	m.cursor, m.loaded, m.lastChange = msg.cursor, true, msg.lastWrite
	m.first = firstPageState{partial: msg.partial}
	m.runs.SetReading(msg.partial)
	m.st.model.SetRuns(msg.runs)
	m.st.model.SetRequests(msg.requests, now)
	unknown := m.st.model.Unknown()
	m.refreshItems()
	cmds := []tea.Cmd{m.askRefresh()} // none while partial: after the rest
	if msg.partial {
		cmds = append(cmds, loadRest(m.src, m.cursor))
	}
	if len(unknown) > 0 {
		cmds = append(cmds, loadStats(m.src, unknown))
		if msg.partial {
			m.first.asked = map[string]bool{}
			for _, id := range unknown {
				m.first.asked[id] = true
			}
		}
	}
	if first, sure := m.firstRun(); first != "" && (sure || !msg.partial) {
		cmds = append(cmds, m.openRun(first))
	} else if msg.partial {
		m.first.openLater = true
	}
	return tea.Batch(cmds...)
}

// firstRun is the run to open at start: the one asked for, else the newest
// root that is running or waiting, else the newest. sure says an older run
// than the model holds could not be the one (it is the one asked for, or
// live): only the newest roots are known while the first page is drawn.
func (m *Model) firstRun() (id string, sure bool) {
	md := m.st.model
	if _, ok := md.Run(m.opt.Run); ok {
		return m.opt.Run, true // opened in its tree, selected
	}
	if m.opt.Run != "" && m.first.partial {
		return "", false // older than the page: known with the rest
	}
	now := m.now()
	roots := md.Roots()
	for _, id := range roots {
		if st := md.State(id, now); st == store.StateRunning || st == store.StateWaiting {
			return id, true
		}
	}
	if len(roots) > 0 {
		return roots[0], false
	}
	return "", false
}

// openRun shows a run's tree and its root agent.
func (m *Model) openRun(id string) tea.Cmd {
	root := m.st.model.RootOf(id)
	m.st.root = root
	m.tree.Select(id)
	ids := m.st.model.Subtree(root)
	m.refreshTree()
	return tea.Batch(m.selectAgent(id), loadTreeEvents(m.src, root, ids), m.wantActivity(true), m.wantHistory())
}

// selectAgent shows an agent's steps and drift.
func (m *Model) selectAgent(id string) tea.Cmd {
	if id == "" || (id == m.st.agent.id && m.st.agent.loaded) {
		return nil
	}
	m.st.agent.want(id)
	m.timeline.Loading(id, m.agentTitle(id))
	m.drift.Set(m.agentTitle(id), nil)
	m.detail.Set(nil)
	m.detailWant = 0
	return loadAgent(m.src, id)
}

func (m *Model) onAgent(msg agentMsg) tea.Cmd {
	if msg.runID != m.st.agent.id {
		return nil // the user moved on
	}
	if msg.err != nil {
		m.fail(msg.err)
		m.timeline.Load(msg.runID, m.agentTitle(msg.runID), nil, false)
		return nil
	}
	m.st.agent.set(msg.runID, msg.ranged, msg.index, msg.facets, msg.winLo, msg.steps, msg.samples, msg.calls)
	m.st.agent.policyOnly = msg.policyOnly
	live := false
	if _, ok := m.st.model.Run(msg.runID); ok {
		st := m.st.model.State(msg.runID, m.now())
		live = st == store.StateRunning || st == store.StateWaiting || st == store.StateUnknown
	}
	m.timeline.Show(msg.runID, m.agentTitle(msg.runID), &m.st.agent, live)
	if !live {
		// A finished run opens at its start, but the last step is the one
		// most people want to read first.
		m.timeline.ShowLast()
	}
	m.drift.SetSamples(m.agentTitle(msg.runID), m.st.agent.samples)
	return m.wantDetail(true)
}

// wantDetail loads the selected step's detail, at once or after the
// selection has rested a moment.
func (m *Model) wantDetail(now bool) tea.Cmd {
	st, ok := m.timeline.Selected()
	if !ok {
		m.detailWant = 0
		m.detail.Set(m.st.agent.policyOnly) // nil, but for a run with policy events and no step
		return nil
	}
	rev := m.stepRev(st)
	if st.RowID == m.detailWant && m.detail.RowID() == st.RowID && rev == m.detailRev {
		return nil
	}
	m.detailWant, m.detailRev = st.RowID, rev
	m.detail.Loading()
	if now {
		return loadDetail(m.src, m.timeline.RunID(), st.RowID)
	}
	m.detailSeq++
	seq := m.detailSeq
	return m.after(detailDelay, func(time.Time) tea.Msg { return detailDueMsg{seq: seq} })
}

func (m *Model) onSignal(sig watch.Signal) tea.Cmd {
	next := m.waitSignal(m.watcher)
	switch sig.Kind {
	case watch.Changed:
		if m.reopenWant {
			return tea.Batch(next, m.tryReopen()) // every signal retries a reopen that failed
		}
		if m.refreshing {
			m.again = true
			return next
		}
		return tea.Batch(next, m.askRefresh())
	case watch.ModeChanged:
		m.watchNote = sig.Reason
		return next
	case watch.Gone:
		m.markStale(staleGone, "store gone: "+orText(sig.Reason, "deleted or moved")+" — waiting for it to come back")
		return next
	case watch.Replaced:
		if m.staleCause == staleGone {
			m.stale, m.staleCause = "", staleNone
		}
		if m.opt.Reopen != nil {
			m.reopenWant = true
			m.markStale(staleReopen, "store replaced: "+orText(sig.Reason, "a different file is at its path")+" — opening it again")
			return tea.Batch(next, m.tryReopen())
		}
		return tea.Batch(next, m.askRefresh())
	}
	return next
}

func orText(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// askRefresh reads the store's changes unless a read is already running
// (then it runs again when that one is done).
func (m *Model) askRefresh() tea.Cmd {
	// While the first page is shown, changes wait for the rest: folded
	// into the page, they would be lost when the rest replaces it.
	if !m.loaded || m.cursor == nil || m.first.partial {
		return nil
	}
	if m.refreshing {
		m.again = true
		return nil
	}
	m.refreshing = true
	return refresh(m.src, m.cursor)
}

func (m *Model) onChanges(msg changesMsg) tea.Cmd {
	m.refreshing = false
	if msg.err != nil {
		// Tried again on the next change the watcher sees, and after a
		// back-off if none comes.
		m.markStale(staleRead, "cannot read the store: "+msg.err.Error())
		m.ack(false)
		return m.retryLater()
	}
	if m.staleCause == staleRead {
		m.clearStale(staleRead)
		m.tries = 0
	}
	ch := msg.ch
	m.cursor = msg.next
	m.problems = msg.problems
	if ch.Reset {
		m.ack(true)
		if m.opt.Reopen != nil {
			// Another store sits at the path (rewritten in place, or put
			// back shorter): what is shown is not it.
			m.reopenWant = true
			m.markStale(staleReopen, "the store at the path is another one — opening it again")
			return m.tryReopen()
		}
		return nil
	}
	found := !ch.Empty()
	if found {
		if !ch.Unwritten {
			// (A fold put in place is no write: "updated" keeps its time.)
			m.lastChange = m.now()
		}
		m.problem = ""
		// A table added to the store since it was opened (run_leases after an
		// upgrade) is learned by the source as it tails: ask again.
		m.st.model.SetRecordsLeases(m.src.RecordsLeases())
		c := m.st.apply(ch, m.now())
		m.applyChanged(c, ch)
		if len(ch.Reloaded) > 0 {
			m.notice("%s read whole again (another store at its path, or back under a cursor it could not resume); the other stores were not",
				strings.Join(ch.Reloaded, ", "))
		}
		var reopen tea.Cmd
		if c.reopen != "" {
			reopen = m.openRun(c.reopen) // its store was loaded again alone
		}
		if len(c.Recount) > 0 {
			return tea.Batch(loadStats(m.src, c.Recount), m.afterChanges(ch, found), reopen)
		}
		if reopen != nil {
			return tea.Batch(reopen, m.afterChanges(ch, found))
		}
	}
	return m.afterChanges(ch, found)
}

// afterChanges asks for the next refresh or acknowledges this one.
func (m *Model) afterChanges(ch *store.Changes, found bool) tea.Cmd {
	if ch.More || m.again {
		m.again = false
		return tea.Batch(m.askRefresh(), m.wantDetailIfFollowing(), m.policyOnlyAfter(ch))
	}
	m.ack(found)
	return tea.Batch(m.wantDetailIfFollowing(), m.policyOnlyAfter(ch))
}

// ack tells the watcher the refresh is done and whether it found anything.
func (m *Model) ack(found bool) {
	if m.watcher != nil {
		m.watcher.Ack(found)
	}
}

func (m *Model) wantDetailIfFollowing() tea.Cmd {
	if m.timeline.Following() {
		return m.wantDetail(false)
	}
	// The selected step itself moved (a retry or an attempt arrived): its
	// detail is read again, so it says what the timeline does.
	if st, ok := m.timeline.Selected(); ok && (st.RowID != m.detailWant || m.stepRev(st) != m.detailRev) {
		return m.wantDetail(false)
	}
	return nil
}

// countsEvery is how often a burst of commits may rebuild the run list just
// to move its counts (a rebuild walks every run; state changes do it at once).
const countsEvery = 250 * time.Millisecond

func (m *Model) applyChanged(c changed, ch *store.Changes) {
	if c.steps {
		m.timeline.Grew(c.grown.had, c.grown.from, c.grown.fresh)
	}
	if c.samples {
		m.drift.SetSamples(m.agentTitle(m.st.agent.id), m.st.agent.samples)
	}
	switch now := m.now(); {
	case c.Runs || c.Requests:
		m.refreshItems()
	case (c.Counts || c.Reworded) && m.queueMoves(ch, now):
		m.refreshItems() // what may be decided moved with the counts: at once
	case (c.Counts || c.Reworded) && now.Sub(m.itemsAt) >= countsEvery:
		m.refreshItems()
	case c.Counts || c.Reworded:
		// Shown by the next rebuild: the clock tick's at the latest.
	case c.Tree:
		m.refreshTree()
	}
}

// agentTitle names an agent in pane titles: "#3 worker: goal". The goal's
// whole first line: the frame cuts it to the room its title has.
func (m *Model) agentTitle(id string) string {
	r, ok := m.st.model.Run(id)
	if !ok {
		return "#" + store.DisplayID(id)
	}
	return fmt.Sprintf("#%s %s", store.DisplayID(r.ID), firstLine(r.Goal))
}
