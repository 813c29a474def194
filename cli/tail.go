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
}

func (a *app) tail(ctx context.Context, s *session, id string, poll time.Duration) error {
	t := &tailer{a: a, src: s.src, root: id, seen: map[int64]bool{}, ctx: ctx}
	// Watch first, then take the cursor, then read what is there: anything
	// committed in between comes again through Changes and is skipped by
	// row id.
	spec := s.src.Watch()
	w, err := watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Poll: poll})
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
	if t.finished() {
		return t.last()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
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
				if t.finished() {
					return t.last()
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
	tokens   int64
	aux      bool // a retry, escalation or compaction row
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
			if !st.Pending {
				rows = append(rows, tailRow{rowID: st.RowID, runID: id, number: st.Number, decision: st.Decision, result: st.ResultHead, tokens: st.Tokens})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].rowID < rows[j].rowID })
	return t.print(rows)
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
					tokens: s.Tokens, aux: s.IsAux()})
			}
		}
		if err := t.print(rows); err != nil {
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
		if r.aux {
			fmt.Fprintf(t.a.out(), "#%s step %d  %s\n", clean(r.runID), r.number, cleanCut(r.decision, 160))
			continue
		}
		result := strings.TrimSpace(r.result)
		line := fmt.Sprintf("#%s step %d  %s", clean(r.runID), r.number, cleanCut(r.decision, 160))
		if result != "" {
			line += "  →  " + cleanCut(result, 160)
		}
		line += fmt.Sprintf("  (%d tokens)", r.tokens)
		// One write per line: a pipe or a log file gets whole lines as they come.
		if _, err := fmt.Fprintln(t.a.out(), line); err != nil {
			return err
		}
	}
	return nil
}

// finished reports whether the tailed run has ended. A run parked on a
// human has not: StateOf, told nothing of leases, says paused for it.
func (t *tailer) finished() bool {
	r, _ := t.md.Run(t.root)
	return store.StateOf(r, nil, false, false, time.Time{}) == store.StateFinished
}

// last prints the line that ends a tail: the outcome, the run's own counts
// and duration, and for a tree the whole tree's counts.
func (t *tailer) last() error {
	r := t.summary()
	parts := []string{}
	if own := t.md.Agent(r.ID); own.Known {
		parts = append(parts, fmt.Sprintf("%d steps", own.Steps), textfmt.Tokens(own.Tokens)+" tokens")
	}
	if d, ok := t.md.Duration(r.ID, t.a.now()); ok {
		parts = append(parts, textfmt.Duration(d))
	}
	line := fmt.Sprintf("#%s finished: %s", clean(r.ID), orDash(clean(string(r.Outcome))))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ")
		if n, tree := t.md.Agents(r.ID), t.md.Tree(r.ID); n > 1 && tree.Known {
			line += fmt.Sprintf("; whole tree: %d agents, %d steps, %s tokens", n, tree.Steps, textfmt.Tokens(tree.Tokens))
		}
		line += ")"
	}
	_, err := fmt.Fprintln(t.a.out(), line)
	return err
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
	if g, ok := t.src.(store.RunGetter); ok {
		return g.Run(t.ctx, t.root)
	}
	runs, err := t.src.Runs(t.ctx)
	if err != nil {
		return store.Run{}, err
	}
	for _, x := range runs {
		if x.ID == t.root {
			return x, nil
		}
	}
	return store.Run{}, noSuchRun(t.src, t.root)
}
