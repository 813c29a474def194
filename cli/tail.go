package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// tailer follows one run and every run under it.
type tailer struct {
	a    *app
	src  store.Source
	root string          // the run being tailed
	md   *runmodel.Model // every run, folded forward: the tailed tree as it grows, and its counts
	seen map[int64]bool  // step rows printed
	ctx  context.Context

	forever   bool                      // follow on after the run stops
	json      bool                      // one JSON object a line (tail_requests.go)
	asked     map[store.RequestKey]bool // requests told asked
	decided   map[store.RequestKey]bool // and decided
	told      ending                    // the stop last told (--forever tells each once)
	crashedAt time.Time                 // when the run first read crashed, for the settle
}

func (a *app) tail(ctx context.Context, s *session, id string, poll time.Duration, forever, asJSON bool) error {
	t := &tailer{a: a, src: s.src, root: id, seen: map[int64]bool{}, ctx: ctx, forever: forever, json: asJSON}
	// Watch first, then take the cursor, then read what is there: anything
	// committed in between comes again through Changes and is skipped by
	// row id.
	var w watch.Wakeup
	var err error
	if s.wake != nil {
		// An ssh:// store's agent, or several stores' own wakeups.
		w, err = s.wake()
	} else {
		spec := s.src.Watch()
		w, err = watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Touched: spec.Touched, Depth: spec.Depth, Poll: poll})
	}
	if err != nil {
		return fmt.Errorf("%s: cannot watch the store: %w", s.src.Path(), err)
	}
	defer w.Close()
	cur, err := s.src.Head(ctx)
	if err != nil {
		return t.quiet(err)
	}
	// Counted now, so the steps folded in later add to known counts.
	if t.md, err = runmodel.Load(ctx, s.src, a.now()); err != nil {
		return t.quiet(err)
	}
	if _, ok := t.md.Run(id); !ok {
		return noSuchRun(s.src, id)
	}
	if err := t.printExisting(); err != nil {
		return t.quiet(err)
	}
	// A driver that dies writes nothing: the run's liveness is looked at
	// on a clock too, not only when the store changes.
	check := time.NewTicker(a.tailCheck)
	defer check.Stop()
	for {
		if done, err := t.stopped(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-check.C:
		case sig, ok := <-w.C():
			if !ok {
				return nil
			}
			switch sig.Kind {
			case watch.Changed:
				var found bool
				found, cur, err = t.refresh(cur)
				w.Ack(found)
				if err != nil {
					return t.quiet(err)
				}
			case watch.Gone:
				return fmt.Errorf("%s: the store was deleted while tailing", s.src.Path())
			case watch.Replaced:
				return fmt.Errorf("%s: the store was replaced while tailing", s.src.Path())
			case watch.ModeChanged:
				fmt.Fprintln(t.a.errOut(), "vigil: "+clean(sig.Reason))
			}
		}
	}
}

// ending is how a tailed run stopped, if it has.
type ending int

const (
	notStopped ending = iota
	endFinished
	endPaused   // parked until its host resumes it
	endRecovery // its driver died inside a call; a resume waits on a person
	endCrashed  // its driver is gone
)

// endingOf reads the run's state as the run model tells it now. A run
// parked on a human by a live driver, a stale lease (the driver may be
// hung) and a store that records no leases have not stopped.
func (t *tailer) endingOf() ending {
	switch t.md.State(t.root, t.a.now()) {
	case store.StateFinished:
		return endFinished
	case store.StatePaused:
		return endPaused
	case store.StateRecovery:
		return endRecovery
	case store.StateCrashed:
		return endCrashed
	}
	return notStopped
}

// stopped prints the last line once the run has stopped and says whether
// tail is done (never with --forever, which prints it once per stop and
// follows on). A crashed reading is believed only once it has held for
// tailSettle with no step committed meanwhile: a run is briefly unleased
// between its start and its lease, and a harness that takes no lease still
// writes its steps.
func (t *tailer) stopped() (bool, error) {
	e := t.endingOf()
	if e == endCrashed {
		if t.crashedAt.IsZero() {
			t.crashedAt = time.Now()
		}
		if time.Since(t.crashedAt) < t.a.tailSettle {
			return false, nil
		}
	} else {
		t.crashedAt = time.Time{}
	}
	if e == notStopped || e == t.told {
		t.told = e
		return false, nil
	}
	t.told = e
	code, err := t.last(e)
	if err != nil || t.forever {
		return false, err
	}
	if code == ExitOK {
		return true, nil
	}
	return true, &exitStatus{code}
}

// quiet turns an error caused by Ctrl-C into a clean exit.
func (t *tailer) quiet(err error) error {
	if t.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

type tailRow struct {
	rowID    int64
	runID    string
	number   int
	decision string
	result   string // the result's first line
	tokens   *int64 // nil: the store recorded no count
	aux      bool   // a retry, escalation or compaction row
	pending  bool   // a step in flight: its committed row follows
	toolCall string // what a step in flight is doing
}

func (t *tailer) printExisting() error {
	var rows []tailRow
	for _, id := range t.md.Subtree(t.root) {
		steps, err := t.src.Steps(t.ctx, id)
		if err != nil {
			return err
		}
		for _, st := range steps {
			for _, r := range st.Retries {
				rows = append(rows, tailRow{rowID: r.RowID, runID: id, number: st.Number, decision: r.Decision, aux: true})
			}
			switch {
			case !st.Pending:
				rows = append(rows, tailRow{rowID: st.RowID, runID: id, number: st.Number, decision: st.Decision, result: st.ResultHead, tokens: knownTokens(st.Tokens, st.TokensUnknown)})
			case len(st.Retries) == 0: // a step in flight the format shows as it stands
				rows = append(rows, tailRow{rowID: st.RowID, runID: id, number: st.Number, decision: st.Decision, pending: true, toolCall: st.ToolCall})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].rowID < rows[j].rowID })
	if err := t.print(rows); err != nil {
		return err
	}
	// What waits now is told; what was decided before tail started is not news.
	var waiting []store.Request
	for _, q := range t.md.Requests() {
		if q.Waits() {
			waiting = append(waiting, q.Request)
		}
	}
	return t.tailRequests(waiting)
}

// refresh reads what changed (page by page), prints the new steps, and
// returns the cursor to read from next.
func (t *tailer) refresh(cur store.Cursor) (bool, store.Cursor, error) {
	found := false
	for {
		ch, next, err := t.src.Changes(t.ctx, cur)
		if err != nil {
			return found, cur, err
		}
		cur = next
		if ch.Reset {
			return found, cur, fmt.Errorf("%s: the store was replaced while tailing", t.src.Path())
		}
		found = found || !ch.Empty()
		// Runs are folded with the steps: a step of a child spawned since
		// the last refresh belongs to the tree once its run is known.
		t.md.Apply(ch, t.a.now())
		var rows []tailRow
		for _, s := range ch.Steps {
			if t.md.Within(s.RunID, t.root) {
				rows = append(rows, tailRow{rowID: s.RowID, runID: s.RunID, number: s.Number, decision: s.Decision, result: s.ResultHead,
					tokens: knownTokens(s.Tokens, s.TokensUnknown), aux: s.IsAux(), pending: s.Pending, toolCall: s.ToolCall})
			}
		}
		if err := t.print(rows); err != nil {
			return found, cur, err
		}
		if err := t.tailRequests(ch.Requests); err != nil {
			return found, cur, err
		}
		if !ch.More {
			return found, cur, nil
		}
	}
}

// print writes one line per new step row, in commit order.
func (t *tailer) print(rows []tailRow) error {
	for _, r := range rows {
		if t.seen[r.rowID] {
			continue
		}
		t.seen[r.rowID] = true
		// A step committed is a driver at work, whatever the lease says (a
		// harness that takes none): a crashed reading starts its settle again.
		t.crashedAt = time.Time{}
		ev := tailStepEvent{Event: "step", RunID: r.runID, Step: r.number, Decision: r.decision, Tokens: r.tokens}
		if r.aux {
			ev.Event, ev.Tokens = "retry", nil
			if err := t.emit(fmt.Sprintf("#%s step %d  %s", clean(r.runID), r.number, cleanCut(r.decision, 160)), ev); err != nil {
				return err
			}
			continue
		}
		if r.pending { // its committed row prints its result and tokens when it comes
			line := fmt.Sprintf("#%s step %d  %s", clean(r.runID), r.number, cleanCut(r.decision, 160))
			if call := strings.TrimSpace(r.toolCall); call != "" {
				line += "  " + cleanCut(call, 160)
			}
			ev.Event, ev.Tokens = "pending", nil
			if err := t.emit(line, ev); err != nil {
				return err
			}
			continue
		}
		result := strings.TrimSpace(r.result)
		ev.Result = str(result)
		line := fmt.Sprintf("#%s step %d  %s", clean(r.runID), r.number, cleanCut(r.decision, 160))
		if result != "" {
			line += "  →  " + cleanCut(result, 160)
		}
		if r.tokens != nil {
			line += fmt.Sprintf("  (%d tokens)", *r.tokens)
		} else {
			line += "  (tokens not reported)"
		}
		// One write per line: a pipe or a log file gets whole lines as they come.
		if err := t.emit(line, ev); err != nil {
			return err
		}
	}
	return nil
}

// last prints the line that ends a tail and returns the exit code it
// means: the outcome or the stop, the run's own counts and duration, and
// for a tree the whole tree's counts.
func (t *tailer) last(e ending) (int, error) {
	r, _ := t.md.Run(t.root)
	if e == endFinished {
		r = t.summary()
	}
	parts := []string{}
	if own := t.md.Agent(r.ID); own.Known {
		parts = append(parts, fmt.Sprintf("%d steps", own.Steps), textfmt.TokensProse(own.Tokens, own.Unreported))
	}
	if d, ok := t.md.Duration(r.ID, t.a.now()); ok {
		parts = append(parts, textfmt.Duration(d))
	}
	var head, why string
	code := ExitOK
	switch e {
	case endFinished:
		head = "finished: " + orDash(clean(string(r.Outcome)))
		if !r.Outcome.Succeeded() {
			code = ExitFailed
		}
	case endPaused:
		head, code = "paused: "+orDash(clean(string(r.Outcome))), ExitPaused
		why = "it waits for its host to resume it"
		if open := t.waiting(); len(open) > 0 {
			why += " with a decision on " + strings.Join(open, ", ")
		}
	case endRecovery:
		head, code = "waits on recovery", ExitPaused
		if rec := r.Recovery; rec != nil {
			head += fmt.Sprintf(": %s at step %d", clean(rec.Tool), rec.Step)
		}
		why = "its driver died inside the call; a resume waits for a person to say retry, completed or abort"
	case endCrashed:
		head, code = "crashed", ExitCrashed
		why = "its driver is gone"
		if l, _ := t.md.Lease(r.ID); l != nil && l.OwnerPID() > 0 {
			why = fmt.Sprintf("its driver (pid %d) is gone", l.OwnerPID())
		}
		why += "; a resume would continue it"
	}
	line := fmt.Sprintf("#%s %s", clean(r.ID), head)
	if len(parts) > 0 || why != "" {
		line += " ("
		if why != "" {
			line += why
			if len(parts) > 0 {
				line += "; "
			}
		}
		line += strings.Join(parts, ", ")
		if n, tree := t.md.Agents(r.ID), t.md.Tree(r.ID); n > 1 && tree.Known {
			line += fmt.Sprintf("; whole tree: %d agents, %d steps, %s", n, tree.Steps, textfmt.TokensProse(tree.Tokens, tree.Unreported))
		}
		line += ")"
	}
	err := t.emit(line, tailStopEvent{Event: "stopped", RunID: r.ID, Line: line, Exit: code})
	return code, err
}

// waiting is the keys of the requests the tailed run waits on.
func (t *tailer) waiting() []string {
	var out []string
	for _, q := range t.md.Requests() {
		if q.RunID == t.root && q.Waits() {
			out = append(out, requestKey(q.Key()))
		}
	}
	return out
}

// summary is the finished run with its summary, folded into the model
// (its counts are the summary's). io-harness writes the outcome and the
// summary row in two statements, so a refresh can see the run ended before
// its summary lands: wait a little for it.
func (t *tailer) summary() store.Run {
	r, _ := t.md.Run(t.root)
	for i := 0; r.Summary == nil && i < 20 && t.ctx.Err() == nil; i++ {
		if i > 0 {
			time.Sleep(25 * time.Millisecond)
		}
		x, err := t.reread()
		if err != nil {
			break
		}
		if x.Summary != nil {
			t.md.Apply(&store.Changes{Runs: []store.Run{x}}, t.a.now())
			r, _ = t.md.Run(t.root)
		}
	}
	return r
}

// reread reads the tailed run's row again.
func (t *tailer) reread() (store.Run, error) {
	return t.src.Run(t.ctx, t.root)
}
