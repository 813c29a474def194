package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
	"github.com/vigil-run/vigil/watch"
)

// Every read runs in a command, off the update loop, with a deadline: a
// store that stalls (a writer in EXCLUSIVE mode) costs a message, not a
// frozen screen. Results carry what they were asked for, so a reply that
// arrives after the user moved on is recognised and dropped — and the
// generation of the source they were read from, so a read still in flight
// when the store was reopened is dropped instead of folded into the new
// source's state.

// source is the store the model reads, with its generation: each reopen
// starts a new one.
type source struct {
	store.Source
	gen     int
	reading *readProgress // how far its first read got (reading.go)
}

// from stamps a reply with the generation of the source it was read from.
type from struct{ gen int }

func (f from) sourceGen() int { return f.gen }

// reply is a message carrying data read from a source.
type reply interface{ sourceGen() int }

// ioTimeout bounds one read for the explorer. Reads are exact, so on a
// big tree or a slow machine one can take many seconds (the first live
// read of a 100 k-agent tree takes about 6 s here): the bound is for a
// read that never answers, not for a slow one, which must finish.
const ioTimeout = 2 * time.Minute

func ioCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ioTimeout)
}

type loadedMsg struct {
	from
	cursor    store.Cursor
	runs      []store.Run
	partial   bool // runs is the newest page (store.RecentRunner): the rest comes as a restMsg
	requests  []store.Request
	lastWrite time.Time // the store's own newest row time (zero: it cannot say)
	problems  problems  // what the source reads without (problems.go)
	err       error
}

// firstPage is how many of the newest runs the first frame is drawn from
// (more than any screen shows) when the source can read them alone: on
// 10 k runs the page costs a few ms where every run costs 130.
const firstPage = 256

// loadAll takes a cursor first, then reads the runs (the newest page, when
// the source can) and open requests: whatever lands in between comes
// again through Changes, keyed by id.
func loadAll(src source) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		msg := loadedMsg{from: from{src.gen}}
		caps := src.Capabilities()
		paged := caps.Has(store.CapFirstPage)
		var cur store.Cursor
		var err error
		whole := true
		if caps.Has(store.CapQuickHead) && paged {
			// The page's runs are followed from here; the rest with the
			// rest of the runs (loadRest), before they are read.
			src.reading.set("finding its newest changes")
			cur, whole, err = src.HeadNewest(ctx, firstPage)
		} else {
			src.reading.set("finding where it ends")
			cur, err = src.Head(ctx)
		}
		if err != nil {
			msg.err = err
			return msg
		}
		var runs []store.Run
		if paged {
			var all bool
			src.reading.set("the newest runs")
			runs, all, err = src.RecentRuns(ctx, firstPage)
			// A page that holds every run still needs the rest's pass when
			// the cursor did not follow them all (runs deleted in between):
			// Changes refuses such a cursor.
			msg.partial = !all || !whole
		} else {
			src.reading.set("every run")
			runs, err = src.Runs(ctx)
		}
		if err != nil {
			msg.err = err
			return msg
		}
		src.reading.set("what waits on a human")
		reqs, err := src.Requests(ctx, true)
		msg.cursor, msg.runs, msg.requests, msg.err = cur, runs, reqs, err
		msg.lastWrite = lastWrite(src)
		msg.problems = problemsOf(src.Source)
		return msg
	}
}

// restMsg is every run, after a first frame drawn from the newest page,
// and the first load's cursor following every run (nil: it already did).
type restMsg struct {
	from
	runs   []store.Run
	cursor store.Cursor
	err    error
}

// loadRest reads every run. A cursor from HeadNewest is first made to
// follow every run (store.QuickHeader): the runs are read after it, so
// whatever changes in between comes again through Changes.
func loadRest(src source, cur store.Cursor) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		msg := restMsg{from: from{src.gen}}
		if cur != nil {
			if msg.cursor, msg.err = src.WholeHead(ctx, cur); msg.err != nil {
				return msg
			}
		}
		msg.runs, msg.err = src.Runs(ctx)
		return msg
	}
}

type statsMsg struct {
	from
	stats map[string]store.RunStats
	err   error
}

func loadStats(src source, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		st, err := src.RunStats(ctx, ids)
		return statsMsg{from: from{src.gen}, stats: st, err: err}
	}
}

type agentMsg struct {
	from
	runID   string
	ranged  bool // read through store.StepRanger: steps are the newest, from winLo
	index   *chunked[stepEntry]
	facets  *views.StepFacets
	winLo   int
	steps   []store.Step
	samples []store.ContextSample
	calls   []store.ProviderCall
	// policyOnly: the run has no step rows but policy events (policy_only.go).
	policyOnly *store.StepDetail
	err        error
}

func loadAgent(src source, runID string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		m := agentMsg{from: from{src.gen}, runID: runID}
		if src.Capabilities().Has(store.CapWindow) {
			m.ranged = true
			if m.err = loadRanged(ctx, src.Source, &m); m.err != nil {
				return m
			}
		}
		if !m.ranged {
			if m.steps, m.err = src.Steps(ctx, runID); m.err != nil {
				return m
			}
			if m.calls, m.err = src.ProviderCalls(ctx, runID); m.err != nil {
				return m
			}
		}
		if len(m.steps) == 0 && (m.index == nil || m.index.Len() == 0) {
			if m.policyOnly, m.err = readPolicyOnly(ctx, src.Source, runID); m.err != nil {
				return m
			}
		}
		m.samples, m.err = src.ContextSamples(ctx, runID)
		return m
	}
}

type treeEventsMsg struct {
	from
	root   string
	events []store.AgentEvent
	err    error
}

func loadTreeEvents(src source, root string, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		evs, err := src.AgentEvents(ctx, ids...)
		return treeEventsMsg{from: from{src.gen}, root: root, events: evs, err: err}
	}
}

type detailMsg struct {
	from
	rowID  int64
	detail store.StepDetail
	err    error
}

func loadDetail(src source, runID string, rowID int64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		d, err := src.StepDetail(ctx, runID, rowID)
		return detailMsg{from: from{src.gen}, rowID: rowID, detail: d, err: err}
	}
}

// detailDueMsg fires after a short pause in step selection: holding j
// should not read every step on the way.
type detailDueMsg struct{ seq int }

const detailDelay = 40 * time.Millisecond

type changesMsg struct {
	from
	ch   *store.Changes
	next store.Cursor // where the next refresh reads from
	err  error
	at   time.Time // when the refresh was asked for
	// problems is what the source reads without after this refresh.
	problems problems
}

func refresh(src source, cur store.Cursor) tea.Cmd {
	at := time.Now()
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		ch, next, err := src.Changes(ctx, cur)
		return changesMsg{from: from{src.gen}, ch: ch, next: next, err: err, at: at, problems: problemsOf(src.Source)}
	}
}

// decidedMsg is not a reply the model drops when it is stale: what became
// of a person's decision is said whichever source it went through.
type decidedMsg struct {
	gen      int
	decision store.Decision
	result   store.DecideResult
	err      error
}

// decide makes a person's decision through the decision service, which
// records it in the audit log.
func decide(src source, mk *decision.Maker, a decision.Ask) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		res, err := mk.Make(ctx, src.Source, a)
		return decidedMsg{gen: src.gen, decision: a.Decision, result: res, err: err}
	}
}

type signalMsg struct{ sig watch.Signal }

type watchClosedMsg struct{}

// waitSignal blocks on the watcher for its next signal (none without one:
// tests send signals themselves). Driven headless (see Settle) it waits
// only as long as a timer would.
func (m *Model) waitSignal(w watch.Wakeup) tea.Cmd {
	if w == nil {
		return nil
	}
	headless := m.headless
	return func() tea.Msg {
		var timeout <-chan time.Time
		if headless > 0 {
			timeout = time.After(headless)
		}
		select {
		case sig, ok := <-w.C():
			if !ok {
				return watchClosedMsg{}
			}
			return signalMsg{sig}
		case <-timeout:
			return nil
		}
	}
}

type reopenedMsg struct {
	src store.Source
	err error
}

func reopen(open func() (store.Source, error)) tea.Cmd {
	return func() tea.Msg {
		src, err := open()
		return reopenedMsg{src: src, err: err}
	}
}

// retryMsg is the back-off timer of a failed reopen or read; try says which
// failure it answers (a later one supersedes it).
type retryMsg struct{ try int }

type tickMsg time.Time

// tick redraws once a second: ages, leases and the misfire guard move with
// the clock, not with the store.
func (m *Model) tick() tea.Cmd {
	return m.after(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}
