package codex

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A sessions tree of months holds thousands of rollouts: the explorer's
// first frame reads the newest alone (store.RecentRunner,
// store.QuickHeader). Rollouts are taken newest modification first (a stat
// each) up to the page. A session's start (session_meta's timestamp) is
// taken before its first line is written, so no rollout left out started
// after cut, the newest modification time among them: a run of the page
// that started after cut sorts above every run left out in the list's
// order (start time, newest first). So does its whole tree: a sub-agent
// starts after its parent, so its rollout was written after cut too. The
// page's other runs might not, and are left for Runs.

// pageRollouts caps the page below the explorer's ask: each rollout is
// read to list it (a small one whole), most of the page's cost, and two
// tall screens of runs are enough until the rest arrives.
const pageRollouts = 128

// newestPage is a page as HeadNewest took it, for the RecentRuns that
// follows: the runs then read are those of the rollouts its cursor
// follows, and the tree is not stat'ed twice.
type newestPage struct {
	limit int
	paths []string
	cut   time.Time
	all   bool
}

// takePage is the page HeadNewest took for limit, once; else a new one.
func (s *Store) takePage(limit int) (paths []string, cut time.Time, all bool) {
	s.mu.Lock()
	p := s.lastPage
	s.lastPage = nil
	s.mu.Unlock()
	if p != nil && p.limit == limit {
		return p.paths, p.cut, p.all
	}
	return s.page(limit)
}

// page is the newest rollouts that fit in limit, and the newest
// modification time among the rollouts left out (all: none was).
func (s *Store) page(limit int) (paths []string, cut time.Time, all bool) {
	limit = min(limit, pageRollouts)
	type dated struct {
		path string
		mod  time.Time
	}
	files := s.files()
	rollouts := make([]dated, 0, len(files))
	for _, p := range files {
		x := dated{path: p}
		if fi, err := os.Stat(p); err == nil {
			x.mod = fi.ModTime()
		}
		rollouts = append(rollouts, x)
	}
	slices.SortStableFunc(rollouts, func(a, b dated) int { return b.mod.Compare(a.mod) })
	if len(rollouts) <= limit {
		return files, time.Time{}, true
	}
	for _, r := range rollouts[:limit] {
		paths = append(paths, r.path)
	}
	return paths, rollouts[limit].mod, false
}

// RecentRuns is the page's runs whose tree's root started after cut;
// every run when the page holds every rollout.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	paths, cut, all := s.takePage(limit)
	if all {
		runs, err := s.Runs(ctx)
		return runs, true, err
	}
	var runs []store.Run
	ids := map[string]string{}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		ses, full, err := s.glance(p)
		if err != nil || ses.id == "" {
			continue
		}
		ids[ses.id] = p
		runs = append(runs, ses.run(full))
	}
	byID := make(map[string]*store.Run, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	// A run is kept when its root is in the page and started after cut.
	kept := func(r *store.Run) bool {
		for hops := 0; r.ParentID != "" && hops <= len(runs); hops++ {
			if r = byID[r.ParentID]; r == nil {
				return false // its root is older than the page: left for Runs
			}
		}
		return r.StartedAt.After(cut)
	}
	var out []store.Run
	for i := range runs {
		if kept(&runs[i]) {
			out = append(out, runs[i])
		}
	}
	s.mu.Lock()
	for id, p := range ids {
		s.byID[id] = p
	}
	s.mu.Unlock()
	return out, false, nil
}

// HeadNewest follows the page's rollouts alone; whole when the page is
// every rollout.
func (s *Store) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	paths, cut, all := s.page(limit)
	s.mu.Lock()
	s.lastPage = &newestPage{limit: limit, paths: paths, cut: cut, all: all}
	s.mu.Unlock()
	c := &Cursor{files: map[string]fileCur{}, partial: !all}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		c.follow(p)
	}
	return c, all, nil
}

// WholeHead follows every rollout: the ones HeadNewest left out from
// where they end now.
func (s *Store) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		return nil, store.Errorf(s.path, store.ErrUnsupported, nil, "not a cursor of this Codex source")
	}
	if !c.partial {
		return c, nil
	}
	next := &Cursor{files: make(map[string]fileCur, len(c.files)), reason: c.reason}
	for k, v := range c.files {
		next.files[k] = v
	}
	for _, p := range s.files() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, ok := next.files[p]; !ok {
			next.follow(p)
		}
	}
	return next, nil
}

// errPartial: Changes from a cursor that follows the page alone would take
// every other rollout for new.
var errPartial = errors.New("a cursor from HeadNewest follows only the newest sessions: make it whole (WholeHead) before reading changes")
