package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// snapshot is the store as runs and show read it at one moment: every run
// with its counts, the open requests, and the clock that states are told
// against.
type snapshot struct {
	src      store.Source
	now      time.Time
	runs     []store.Run // newest first, as the source lists them
	byID     map[string]store.Run
	children map[string][]string // oldest first
	open     []store.Request
	waiting  map[string]int // open requests per run
}

func loadSnapshot(ctx context.Context, src store.Source, now time.Time) (*snapshot, error) {
	runs, err := src.Runs(ctx)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, r := range runs {
		if !r.StatsKnown {
			unknown = append(unknown, r.ID)
		}
	}
	if len(unknown) > 0 {
		st, err := src.RunStats(ctx, unknown)
		if err != nil {
			return nil, err
		}
		for i := range runs {
			if x, ok := st[runs[i].ID]; ok && !runs[i].StatsKnown {
				runs[i].Steps, runs[i].Tokens, runs[i].StatsKnown = x.Steps, x.Tokens, true
			}
		}
	}
	open, err := src.Requests(ctx, true)
	if err != nil {
		return nil, err
	}
	s := &snapshot{src: src, now: now, runs: runs, byID: make(map[string]store.Run, len(runs)),
		children: map[string][]string{}, open: open, waiting: map[string]int{}}
	for _, r := range runs {
		s.byID[r.ID] = r
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if p := runs[i].ParentID; p != "" {
			s.children[p] = append(s.children[p], runs[i].ID)
		}
	}
	for _, q := range open {
		if q.Waits() { // an orphan is listed, but nobody waits on it
			s.waiting[q.RunID]++
		}
	}
	return s, nil
}

// subtree is id and every run under it, depth first, parents before
// children, siblings oldest first.
func (s *snapshot) subtree(id string) []string { return store.Subtree(id, s.children) }

// root is the root of id's tree.
func (s *snapshot) root(id string) string {
	seen := map[string]bool{}
	for {
		r, ok := s.byID[id]
		if !ok || r.ParentID == "" || seen[id] {
			return id
		}
		seen[id] = true
		if _, ok := s.byID[r.ParentID]; !ok {
			return id
		}
		id = r.ParentID
	}
}

// ancestry is the chain of run ids from the root down to id.
func (s *snapshot) ancestry(id string) []string {
	chain := []string{id}
	seen := map[string]bool{id: true}
	for cur := s.byID[id].ParentID; cur != "" && !seen[cur]; cur = s.byID[cur].ParentID {
		seen[cur] = true
		chain = append([]string{cur}, chain...)
	}
	return chain
}

// waits reports whether a run waits on a human: a root when anything in
// its tree does (as the explorer's runs list shows it), any other run when
// it does itself.
func (s *snapshot) waits(r store.Run) bool {
	if !r.IsRoot() {
		return s.waiting[r.ID] > 0
	}
	for _, id := range s.subtree(r.ID) {
		if s.waiting[id] > 0 {
			return true
		}
	}
	return false
}

// runState is what a person watching a run needs to know about who drives it.
type runState struct {
	state    store.State
	lease    *store.Lease // the effective lease: the run's own or an ancestor's
	heldBy   string       // the run whose lease it is
	liveness store.Liveness
}

func (s *snapshot) stateOf(r store.Run) runState {
	lease := store.EffectiveLease(r, s.byID)
	rs := runState{lease: lease, liveness: store.LivenessOf(lease, s.src.RecordsLeases(), s.now)}
	rs.state = store.StateOf(r, lease, s.src.RecordsLeases(), s.waits(r), s.now)
	if lease != nil {
		for cur, seen := r, map[string]bool{}; !seen[cur.ID]; {
			seen[cur.ID] = true
			if cur.Lease == lease {
				rs.heldBy = cur.ID
				break
			}
			p, ok := s.byID[cur.ParentID]
			if !ok {
				break
			}
			cur = p
		}
	}
	return rs
}

// duration is how long a run took, or (running or waiting) has run so far.
func (s *snapshot) duration(r store.Run, st store.State) (time.Duration, bool) {
	switch {
	case r.Summary != nil && r.Summary.HasDuration:
		return r.Summary.Duration, true
	case (st == store.StateRunning || st == store.StateWaiting) && !r.StartedAt.IsZero():
		return s.now.Sub(r.StartedAt), true
	}
	return 0, false
}

// classify says whether a decision on req would reach its run now.
func (s *snapshot) classify(req store.Request) (store.Delivery, string) {
	run, ok := s.byID[req.RunID]
	if !ok {
		run = store.Run{ID: req.RunID}
	}
	return s.src.Classify(req, run, store.EffectiveLease(run, s.byID), s.now)
}

// stateName is a state as the CLI prints it.
func stateName(st store.State) string {
	if st == store.StateUnknown {
		return "unknown"
	}
	return st.String()
}

func deliveryName(d store.Delivery) string {
	switch d {
	case store.Deliverable:
		return "deliverable"
	case store.DeliveryUnknown:
		return "unknown"
	case store.Deferred:
		return "deferred"
	case store.NotLive:
		return "not_live"
	case store.Closed:
		return "closed"
	case store.Orphaned:
		return "orphaned"
	}
	return "unknown"
}

// Text helpers. Every string from a store goes through clean (one line) or
// sanitize.Text before it reaches a terminal.

func clean(s string) string { return sanitize.Line(s) }

func cleanCut(s string, w int) string { return views.Cut(sanitize.Line(s), w) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(a.loc).Format("2006-01-02 15:04:05")
}

// table writes aligned columns (the header row only when there is one);
// the last column is not padded.
type table struct {
	header []string
	rows   [][]string
	right  map[int]bool // right-aligned columns
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, indent string) {
	all := t.rows
	if t.header != nil {
		all = append([][]string{t.header}, t.rows...)
	}
	var widths []int
	for _, row := range all {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	var b strings.Builder
	for _, row := range all {
		b.Reset()
		b.WriteString(indent)
		for i, c := range row {
			last := i == len(row)-1
			switch {
			case t.right[i]:
				b.WriteString(views.PadLeft(c, widths[i]))
			case last:
				b.WriteString(c)
			default:
				b.WriteString(views.PadRight(c, widths[i]))
			}
			if !last {
				b.WriteString("  ")
			}
		}
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
}
