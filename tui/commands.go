package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Every read runs in a command, off the update loop, with a deadline: a
// store that stalls (a writer in EXCLUSIVE mode) costs a message, not a
// frozen screen. Results carry what they were asked for, so a reply that
// arrives after the user moved on is recognised and dropped.

const ioTimeout = 10 * time.Second

func ioCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ioTimeout)
}

type loadedMsg struct {
	cursor   store.Cursor
	runs     []store.Run
	requests []store.Request
	err      error
}

// loadAll takes a cursor first, then reads the runs and open requests:
// whatever lands in between comes again through Changes, keyed by id.
func loadAll(src store.Source) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		cur, err := src.Head(ctx)
		if err != nil {
			return loadedMsg{err: err}
		}
		runs, err := src.Runs(ctx)
		if err != nil {
			return loadedMsg{err: err}
		}
		reqs, err := src.Requests(ctx, true)
		return loadedMsg{cursor: cur, runs: runs, requests: reqs, err: err}
	}
}

type statsMsg struct {
	stats map[string]store.RunStats
	err   error
}

func loadStats(src store.Source, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		st, err := src.RunStats(ctx, ids)
		return statsMsg{stats: st, err: err}
	}
}

type agentMsg struct {
	runID   string
	steps   []store.Step
	samples []store.ContextSample
	calls   []store.ProviderCall
	err     error
}

func loadAgent(src store.Source, runID string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		m := agentMsg{runID: runID}
		if m.steps, m.err = src.Steps(ctx, runID); m.err != nil {
			return m
		}
		if m.samples, m.err = src.ContextSamples(ctx, runID); m.err != nil {
			return m
		}
		m.calls, m.err = src.ProviderCalls(ctx, runID)
		return m
	}
}

type treeEventsMsg struct {
	root   string
	events []store.AgentEvent
	err    error
}

func loadTreeEvents(src store.Source, root string, ids []string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		evs, err := src.AgentEvents(ctx, ids...)
		return treeEventsMsg{root: root, events: evs, err: err}
	}
}

type detailMsg struct {
	rowID  int64
	detail store.StepDetail
	err    error
}

func loadDetail(src store.Source, runID string, rowID int64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		d, err := src.StepDetail(ctx, runID, rowID)
		return detailMsg{rowID: rowID, detail: d, err: err}
	}
}

// detailDueMsg fires after a short pause in step selection: holding j
// should not read every step on the way.
type detailDueMsg struct{ seq int }

const detailDelay = 40 * time.Millisecond

type changesMsg struct {
	ch  *store.Changes
	err error
	at  time.Time // when the refresh was asked for
}

func refresh(src store.Source, cur store.Cursor) tea.Cmd {
	at := time.Now()
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		ch, err := src.Changes(ctx, cur)
		return changesMsg{ch: ch, err: err, at: at}
	}
}

type decidedMsg struct {
	decision store.Decision
	result   store.DecideResult
	err      error
}

func decide(src store.Source, d store.Decision) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		res, err := src.Decide(ctx, d)
		return decidedMsg{decision: d, result: res, err: err}
	}
}

type signalMsg struct{ sig watch.Signal }

type watchClosedMsg struct{}

// waitSignal blocks on the watcher for its next signal.
func waitSignal(w *watch.Watcher) tea.Cmd {
	return func() tea.Msg {
		sig, ok := <-w.C()
		if !ok {
			return watchClosedMsg{}
		}
		return signalMsg{sig}
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

type tickMsg time.Time

// tick redraws once a second: ages, leases and the misfire guard move with
// the clock, not with the store.
func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}
