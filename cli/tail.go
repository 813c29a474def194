package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
	"github.com/vigil-run/vigil/watch"
)

// tailer follows one run and every run under it.
type tailer struct {
	a    *app
	src  store.Source
	root string               // the run being tailed
	runs map[string]store.Run // every run seen
	in   map[string]bool      // the runs being tailed: root and its tree
	kids map[string][]string  // children by parent, for runs that join later
	seen map[int64]bool       // step rows printed
	ctx  context.Context
}

func (a *app) tail(ctx context.Context, s *session, id string, poll time.Duration) error {
	t := &tailer{a: a, src: s.src, root: id, runs: map[string]store.Run{}, in: map[string]bool{},
		kids: map[string][]string{}, seen: map[int64]bool{}, ctx: ctx}
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
	runs, err := s.src.Runs(ctx)
	if err != nil {
		return t.quiet(err)
	}
	for _, r := range runs {
		t.runs[r.ID] = r
		if r.ParentID != "" {
			t.kids[r.ParentID] = append(t.kids[r.ParentID], r.ID)
		}
	}
	if _, ok := t.runs[id]; !ok {
		return noSuchRun(s.src, id)
	}
	t.join(id)
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
				fmt.Fprintln(t.a.stderr, "vigil: "+clean(sig.Reason))
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

// join adds a run and (recursively) the runs under it that are known.
func (t *tailer) join(id string) {
	if t.in[id] {
		return
	}
	t.in[id] = true
	for _, k := range t.kids[id] {
		t.join(k)
	}
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
	for id := range t.in {
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
		// Runs first: a step of a child spawned since the last refresh
		// belongs to the tree only once its run is known.
		for _, r := range ch.Runs {
			_, known := t.runs[r.ID]
			t.runs[r.ID] = r
			if !known && r.ParentID != "" {
				t.kids[r.ParentID] = append(t.kids[r.ParentID], r.ID)
				if t.in[r.ParentID] {
					t.join(r.ID)
				}
			}
		}
		var rows []tailRow
		for _, s := range ch.Steps {
			if t.in[s.RunID] {
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
			fmt.Fprintf(t.a.stdout, "#%s step %d  %s\n", clean(r.runID), r.number, cleanCut(r.decision, 160))
			continue
		}
		result := strings.TrimSpace(r.result)
		line := fmt.Sprintf("#%s step %d  %s", clean(r.runID), r.number, cleanCut(r.decision, 160))
		if result != "" {
			line += "  →  " + cleanCut(result, 160)
		}
		line += fmt.Sprintf("  (%d tokens)", r.tokens)
		// One write per line: a pipe or a log file gets whole lines as they come.
		if _, err := fmt.Fprintln(t.a.stdout, line); err != nil {
			return err
		}
	}
	return nil
}

// finished reports whether the tailed run has ended. A run parked on a
// human has not: StateOf, told nothing of leases, says paused for it.
func (t *tailer) finished() bool {
	r := t.runs[t.root]
	return store.StateOf(r, nil, false, false, time.Time{}) == store.StateFinished
}

// last prints the line that ends a tail: the outcome and the run's totals.
func (t *tailer) last() error {
	r := t.summary()
	parts := []string{}
	if s := r.Summary; s != nil {
		parts = append(parts, fmt.Sprintf("%d steps", s.Steps), views.Tokens(s.Tokens)+" tokens")
		if s.HasDuration {
			parts = append(parts, views.Duration(s.Duration))
		}
	} else if st, err := t.src.RunStats(t.ctx, []string{r.ID}); err == nil {
		parts = append(parts, fmt.Sprintf("%d steps", st[r.ID].Steps), views.Tokens(st[r.ID].Tokens)+" tokens")
	}
	line := fmt.Sprintf("#%s finished: %s", clean(r.ID), orDash(clean(string(r.Outcome))))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	_, err := fmt.Fprintln(t.a.stdout, line)
	return err
}

// summary is the finished run with its summary. io-harness writes the
// outcome and the summary row in two statements, so a refresh can see the
// run ended before its summary lands: wait a little for it.
func (t *tailer) summary() store.Run {
	r := t.runs[t.root]
	for i := 0; r.Summary == nil && i < 20 && t.ctx.Err() == nil; i++ {
		if i > 0 {
			time.Sleep(25 * time.Millisecond)
		}
		if g, ok := t.src.(store.RunGetter); ok {
			x, err := g.Run(t.ctx, t.root)
			if err != nil {
				break
			}
			r.Summary = x.Summary
			continue
		}
		runs, err := t.src.Runs(t.ctx)
		if err != nil {
			break
		}
		for _, x := range runs {
			if x.ID == t.root {
				r.Summary = x.Summary
			}
		}
	}
	return r
}
