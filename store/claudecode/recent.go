package claudecode

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A history of months holds thousands of sessions: the explorer's first
// frame reads the newest alone (store.RecentRunner, store.QuickHeader).
// Sessions are taken newest file first (a stat each; their sub-agents are
// listed only for the sessions taken) while their transcripts fit in the
// page. A session's start is its first record's time, written into the
// file before any later write, so no session left out started after cut,
// the newest modification time among them: a session of the page that
// started after cut sorts above every session left out in the list's
// order (start time, newest first). The others of the page might not, and
// are left for Runs.

// pageTranscripts caps the page below the explorer's ask: each transcript
// read is its head and tail decoded, most of the page's cost, and two tall
// screens of sessions are enough until the rest arrives.
const pageTranscripts = 128

// page is the newest sessions' transcripts that fit in limit, and the
// newest modification time among the sessions left out (all: none was).
func (s *Store) page(limit int) (entries []entry, cut time.Time, all bool) {
	limit = min(limit, pageTranscripts)
	type session struct {
		path string
		mod  time.Time
	}
	var sessions []session
	s.tree.listMu.Lock()
	files := s.sessionFiles()
	s.tree.listMu.Unlock()
	for _, f := range files {
		x := session{path: f}
		if fi, err := os.Stat(f); err == nil {
			x.mod = fi.ModTime()
		}
		sessions = append(sessions, x)
	}
	slices.SortStableFunc(sessions, func(a, b session) int { return b.mod.Compare(a.mod) })
	taken := 0
	s.tree.listMu.Lock()
	for ; taken < len(sessions); taken++ {
		es := s.sessionEntries(sessions[taken].path)
		if len(entries)+len(es) > limit {
			break
		}
		entries = append(entries, es...)
	}
	s.tree.listMu.Unlock()
	if taken == len(sessions) {
		return entries, time.Time{}, true
	}
	return entries, sessions[taken].mod, false
}

// RecentRuns is the page's sessions that started after cut, with their
// sub-agents; every run when the page holds every session.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	entries, cut, all := s.page(limit)
	if all {
		runs, err := s.Runs(ctx)
		return runs, true, err
	}
	live := liveSessions(s.lay.registry(), time.Now())
	depth := depths(entries)
	var out []store.Run
	keep := false
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		r := s.run(e, live)
		if e.parent == "" {
			keep = r.StartedAt.After(cut)
		}
		if keep {
			r.Depth = depth[e.id]
			out = append(out, r)
		}
	}
	return out, false, nil
}

// HeadNewest follows the page's transcripts alone; whole when the page is
// every session.
func (s *Store) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	entries, _, all := s.page(limit)
	files := layered[fileCursor]{}.edit()
	for _, e := range entries {
		follow(files, e.path)
	}
	c := &cursor{files: files.done(), live: liveKey(liveSessions(s.lay.registry(), time.Now())), partial: !all}
	return c, all, nil
}

// WholeHead follows every transcript: the ones HeadNewest left out from
// where they end now.
func (s *Store) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(*cursor)
	if !ok || c == nil {
		return nil, store.Errorf(s.path, store.ErrUnsupported, nil, "not a Claude Code cursor")
	}
	if !c.partial {
		return c, nil
	}
	files := c.files.edit()
	for _, e := range s.scan() {
		if _, ok := c.files.get(e.path); !ok {
			follow(files, e.path)
		}
	}
	next := &cursor{files: files.done(), live: c.live}
	return next, nil
}

// errPartial: Changes from a cursor that follows the page alone would take
// every other transcript for new.
var errPartial = errors.New("a cursor from HeadNewest follows only the newest sessions: make it whole (WholeHead) before reading changes")
