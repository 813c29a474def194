package opencode

import (
	"context"
	"database/sql"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// A database of months holds thousands of sessions, some of a hundred
// thousand messages: a session's count of model calls reads the data of
// every message it has, so listing every session reads most of the file.
// The explorer's first frame reads the newest sessions alone
// (store.RecentRunner): whole trees, newest root first, while their
// messages fit in pageMessages (the newest tree is always taken). The
// trees taken are exactly the newest roots in the list's order (start
// time, then id) with every session under them, read and counted as Runs
// reads them; the rest arrives with Runs.

// pageMessages caps the messages of the page's sessions: a screen of
// sessions of ordinary length fits.
const pageMessages = 4096

// RecentRuns is the newest trees whose messages fit in the page, at most
// limit sessions; every session when they all fit.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	taken, all, err := s.page(ctx, limit)
	if err != nil {
		return nil, false, err
	}
	if all {
		runs, err := s.Runs(ctx)
		return runs, true, err
	}
	if len(taken) == 0 {
		return nil, false, nil
	}
	rows, err := s.querySessions(ctx, "WHERE s.id IN (?"+strings.Repeat(", ?", len(taken)-1)+") ORDER BY s.time_created DESC, s.id DESC", anys(taken)...)
	if err != nil {
		return nil, false, err
	}
	runs := withDepth(rows)
	for i := range runs {
		uncounted(&runs[i])
	}
	return runs, false, nil
}

// page is the sessions of the first page; all says they are every session.
func (s *Store) page(ctx context.Context, limit int) (taken []string, all bool, err error) {
	var roots []string
	err = s.eachRow(ctx, "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created DESC, id DESC LIMIT ?",
		[]any{limit + 1}, func(r *sql.Rows) error {
			var id string
			err := r.Scan(&id)
			roots = append(roots, id)
			return err
		})
	if err != nil {
		return nil, false, err
	}
	left := pageMessages
	for i, root := range roots {
		tree, err := s.tree(ctx, root)
		if err != nil {
			return nil, false, err
		}
		if len(taken)+len(tree) > limit && i > 0 {
			break
		}
		n, err := s.messagesUpTo(ctx, tree, left+1)
		if err != nil {
			return nil, false, err
		}
		if n > left && i > 0 {
			break
		}
		taken, left = append(taken, tree...), left-n
	}
	var sessions int
	if err := s.eachRow(ctx, "SELECT count(*) FROM session", nil, func(r *sql.Rows) error { return r.Scan(&sessions) }); err != nil {
		return nil, false, err
	}
	// Every session is in the page when it holds as many as the table.
	return taken, len(taken) == sessions, nil
}

// tree is a session and every session under it (session_parent_idx).
func (s *Store) tree(ctx context.Context, root string) ([]string, error) {
	out, level := []string{root}, []string{root}
	seen := map[string]bool{root: true}
	for len(level) > 0 {
		var next []string
		err := s.eachRow(ctx, "SELECT id FROM session WHERE parent_id IN (?"+strings.Repeat(", ?", len(level)-1)+")", anys(level),
			func(r *sql.Rows) error {
				var id string
				if err := r.Scan(&id); err != nil {
					return err
				}
				if !seen[id] {
					seen[id] = true
					next = append(next, id)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		out, level = append(out, next...), next
	}
	return out, nil
}

// messagesUpTo counts the sessions' messages, stopping at most
// (message_session_time_created_id_idx alone: no message's data is read).
func (s *Store) messagesUpTo(ctx context.Context, sessions []string, most int) (int, error) {
	var n int
	err := s.eachRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM message WHERE session_id IN (?"+strings.Repeat(", ?", len(sessions)-1)+") LIMIT ?)",
		append(anys(sessions), most), func(r *sql.Rows) error { return r.Scan(&n) })
	return n, err
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
