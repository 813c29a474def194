package claudecode

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/vigil-run/vigil/store"
)

// RecentRuns is the explorer's first page (store.RecentRunner) without
// reading the head and tail of every transcript: a history of months holds
// thousands. Sessions are taken newest file first (a stat each) while their
// transcripts fit in limit, and read. A session's start is its first
// record's time, written into the file before any later write, so no
// session left out started after cut, the newest modification time among
// them: a session in the page that started after cut sorts above every
// session left out, in the list's order (start time, newest first). The
// others in the page might not, and are left for Runs.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	entries := s.scan()
	type session struct {
		from, to int // its entries: the session, then its sub-agents
		mod      time.Time
	}
	var sessions []session
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].session == entries[i].session && entries[j].parent != "" {
			j++
		}
		var mod time.Time
		if fi, err := os.Stat(entries[i].path); err == nil {
			mod = fi.ModTime()
		}
		sessions = append(sessions, session{from: i, to: j, mod: mod})
		i = j
	}
	slices.SortStableFunc(sessions, func(a, b session) int { return b.mod.Compare(a.mod) })
	taken, n := 0, 0
	for taken < len(sessions) && n+sessions[taken].to-sessions[taken].from <= limit {
		n += sessions[taken].to - sessions[taken].from
		taken++
	}
	if taken == len(sessions) {
		runs, err := s.Runs(ctx)
		return runs, true, err
	}
	cut := sessions[taken].mod // the newest left out
	live := liveSessions(s.lay.registry(), time.Now())
	var page []entry
	for _, x := range sessions[:taken] {
		page = append(page, entries[x.from:x.to]...)
	}
	depth := depths(page)
	var out []store.Run
	for _, x := range sessions[:taken] {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		root := s.run(entries[x.from], live)
		if !root.StartedAt.After(cut) {
			continue
		}
		root.Depth = depth[root.ID]
		out = append(out, root)
		for _, e := range entries[x.from+1 : x.to] {
			r := s.run(e, live)
			r.Depth = depth[e.id]
			out = append(out, r)
		}
	}
	return out, false, nil
}
