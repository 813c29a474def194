package opencode

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Cursor is how far a reader has read an opencode database: the highest
// rowid seen in each table, the assistant messages opencode has not
// finished writing (their rows come when it does), and the running
// sessions with what was last said of them. It is never changed once
// returned: Changes works on a copy.
type Cursor struct {
	marks    map[string]int64
	open     map[string]string // unfinished assistant message → its session
	sent     map[string]int64  // unfinished assistant message → the row id last sent for it
	sessions map[string]string // running session → its signature
	asked    map[string]bool   // permission requests waiting in the opencode server (permissions.go)
	ident    string
	// page is the sessions a cursor from HeadNewest follows, when it does
	// not follow every one yet: WholeHead adds the rest, and Changes
	// refuses it until then.
	page map[string]bool
}

// CursorFormat is "opencode".
func (c *Cursor) CursorFormat() string { return Format }

func (c *Cursor) fork() *Cursor {
	return &Cursor{marks: maps.Clone(c.marks), open: maps.Clone(c.open), sent: maps.Clone(c.sent), sessions: maps.Clone(c.sessions), asked: maps.Clone(c.asked), ident: c.ident, page: maps.Clone(c.page)}
}

func sig(r store.Run) string {
	return fmt.Sprintf("%s|%s|%d|%d|%s", r.Status, r.Outcome, r.Steps, r.Tokens, r.Goal)
}

// Head is a cursor at the database's end.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	tops, _, err := sqlitex.Tops(ctx, &s.stmts, s.read, "rowid", tailed, "")
	if err != nil {
		return nil, sqlitex.MapErr(s.path, err)
	}
	c := &Cursor{marks: tops, open: map[string]string{}, sent: map[string]int64{}, sessions: map[string]string{}}
	if c.ident, err = s.ident(ctx, tops); err != nil {
		return nil, err
	}
	if err := s.followRunning(ctx, c, nil); err != nil {
		return nil, err
	}
	c.asked = s.waitingIDs(ctx, c)
	return c, nil
}

// HeadNewest is Head following only the sessions of the first page
// (RecentRuns' trees): telling which sessions still run reads every
// session's last message. whole says the page is every session.
func (s *Store) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	tops, _, err := sqlitex.Tops(ctx, &s.stmts, s.read, "rowid", tailed, "")
	if err != nil {
		return nil, false, sqlitex.MapErr(s.path, err)
	}
	c := &Cursor{marks: tops, open: map[string]string{}, sent: map[string]int64{}, sessions: map[string]string{}}
	if c.ident, err = s.ident(ctx, tops); err != nil {
		return nil, false, err
	}
	ids, all, err := s.page(ctx, limit)
	if err != nil {
		return nil, false, err
	}
	if all {
		return c, true, s.followRunning(ctx, c, nil)
	}
	c.page = map[string]bool{}
	for _, id := range ids {
		c.page[id] = true
	}
	return c, false, s.followRunning(ctx, c, ids)
}

// WholeHead returns cur following every session: those HeadNewest left
// out are read as they are now.
func (s *Store) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil || c.page == nil {
		return cur, nil
	}
	next := c.fork()
	next.page = nil
	if err := s.followRunning(ctx, next, nil, c.page); err != nil {
		return nil, err
	}
	next.asked = s.waitingIDs(ctx, next)
	return next, nil
}

// followRunning adds to c the sessions still running at its marks, with their
// unfinished replies: those named in only (all when nil), but none in
// skip.
func (s *Store) followRunning(ctx context.Context, c *Cursor, only []string, skip ...map[string]bool) error {
	// Which sessions still run is read without their counts (a running
	// session's signature has none: Changes sends it uncounted).
	where, args := "WHERE s.rowid <= ?", []any{c.marks["session"]}
	if only != nil {
		if len(only) == 0 {
			return nil
		}
		where += " AND s.id IN (?" + strings.Repeat(", ?", len(only)-1) + ")"
		args = append(args, anys(only)...)
	}
	states, err := s.sessionStates(ctx, where, args...)
	if err != nil {
		return err
	}
	for _, st := range states {
		if st.run.Status.Ended() || len(skip) > 0 && skip[0][st.run.ID] {
			continue
		}
		x := st
		c.sessions[x.run.ID] = sig(x.run)
		// An unfinished reply belongs to a running session: only theirs
		// are looked at (message_session_time_created_id_idx).
		msgs, err := s.openMessages(ctx, "WHERE session_id = ? AND rowid <= ?", x.run.ID, c.marks["message"])
		if err != nil {
			return err
		}
		for id, run := range msgs {
			c.open[id] = run
		}
	}
	return nil
}

// openMessages finds the unfinished assistant messages among those where
// selects (Head); a finished message never reopens.
func (s *Store) openMessages(ctx context.Context, where string, args ...any) (map[string]string, error) {
	out := map[string]string{}
	err := s.eachRow(ctx, `SELECT id, session_id FROM message `+where+` AND json_valid(data)
		AND json_extract(data, '$.role') = 'assistant' AND json_extract(data, '$.time.completed') IS NULL
		AND json_extract(data, '$.error') IS NULL`, args, func(r *sql.Rows) error {
		var id, run string
		err := r.Scan(&id, &run)
		out[id] = run
		return err
	})
	return out, err
}

// ident is what the rows at the session and message marks hold, parts
// opencode never rewrites: while it reads the same, the database is the
// one the cursor was made on.
func (s *Store) ident(ctx context.Context, marks map[string]int64) (string, error) {
	var a, b string
	err := s.eachRow(ctx, `SELECT COALESCE((SELECT id || ':' || time_created FROM session WHERE rowid = ?), ''),
		COALESCE((SELECT id FROM message WHERE rowid = ?), '')`, []any{marks["session"], marks["message"]},
		func(r *sql.Rows) error { return r.Scan(&a, &b) })
	return a + "|" + b, err
}

// Changes returns what came after cur. Sessions and messages are new above
// their marks; a message opencode is still writing is read again by its
// primary key until it is finished, and then its turn comes whole: the
// turn row, its tool rows, its provider call. Running sessions are read
// again by primary key. Nothing scans a table: part rows are UPDATEd in
// place as a tool moves from pending to completed, and their time_updated
// has no index, so parts are read only through a finished message
// (part_message_id_id_idx).
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		name := "nil"
		if cur != nil {
			name = cur.CursorFormat()
		}
		return nil, cur, fmt.Errorf("a %s cursor cannot read an opencode database", name)
	}
	if c.page != nil {
		// Which of the other sessions ran meanwhile cannot be told.
		return nil, cur, errors.New("a cursor from HeadNewest follows only the newest sessions: make it whole (WholeHead) before reading changes")
	}
	ch := &store.Changes{}
	tops, _, err := sqlitex.Tops(ctx, &s.stmts, s.read, "rowid", tailed, "")
	if err != nil {
		return nil, cur, sqlitex.MapErr(s.path, err)
	}
	for _, t := range tailed {
		if tops[t] < c.marks[t] {
			ch.Reset = true // a shorter database now sits at the path
			return ch, cur, nil
		}
	}
	if id, err := s.ident(ctx, c.marks); err != nil {
		return nil, cur, err
	} else if id != c.ident {
		ch.Reset = true // another database was written over this one
		return ch, cur, nil
	}
	next := c.fork()
	touched := map[string]bool{}
	var newRuns []session
	if tops["session"] > c.marks["session"] {
		if newRuns, err = s.changedSessions(ctx, fmt.Sprintf("WHERE s.rowid > ? AND s.rowid <= ? ORDER BY s.rowid LIMIT %d", sqlitex.ChangesPage),
			c.marks["session"], tops["session"]); err != nil {
			return nil, cur, err
		}
		next.marks["session"] = advance(ch, len(newRuns), tops["session"], func() int64 { return newRuns[len(newRuns)-1].rowid })
		for _, x := range newRuns {
			touched[x.run.ID] = true
			if x.run.ParentID != "" {
				ch.AgentEvents = append(ch.AgentEvents, store.AgentEvent{RowID: x.rowid, RunID: x.run.ParentID, Kind: store.AgentSpawn,
					ChildRunID: x.run.ID, Detail: x.run.Goal})
			}
		}
	}
	var ready, flying []msgRow
	readyRun := map[string]string{}
	if tops["message"] > c.marks["message"] {
		msgs, err := s.readMessages(ctx, fmt.Sprintf("WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT %d", sqlitex.ChangesPage), c.marks["message"], tops["message"])
		if err != nil {
			return nil, cur, err
		}
		next.marks["message"] = advance(ch, len(msgs), tops["message"], func() int64 { return msgs[len(msgs)-1].rowid })
		runOf, err := s.messageRuns(ctx, msgs)
		if err != nil {
			return nil, cur, err
		}
		for _, m := range msgs {
			touched[runOf[m.id]] = true
			if !m.ok || m.m.Role != "assistant" {
				continue
			}
			if m.m.Time.Completed != 0 || m.m.Error != nil {
				ready, readyRun[m.id] = append(ready, m), runOf[m.id]
			} else {
				next.open[m.id] = runOf[m.id]
				flying = append(flying, m)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.open)) {
		if _, again := readyRun[id]; again {
			continue
		}
		got, err := s.readMessages(ctx, "WHERE id = ?", id)
		if err != nil {
			return nil, cur, err
		}
		if len(got) == 0 {
			delete(next.open, id) // deleted with its session
			continue
		}
		if m := got[0]; m.ok && (m.m.Time.Completed != 0 || m.m.Error != nil) {
			ready, readyRun[id] = append(ready, m), c.open[id]
			touched[c.open[id]] = true
		} else if m.ok {
			flying = append(flying, m)
		}
	}
	for _, m := range ready {
		delete(next.open, m.id)
		delete(next.sent, m.id)
		if err := s.readyTurn(ctx, ch, readyRun[m.id], m); err != nil {
			return nil, cur, err
		}
	}
	if err := s.liveTurns(ctx, next, ch, flying); err != nil {
		return nil, cur, err
	}
	// Row ids follow part rowids (steps.go, rowID): in their order a turn
	// finished late (read again by its key) comes before a newer one.
	slices.SortStableFunc(ch.Steps, func(a, b store.StepRow) int { return cmp.Compare(a.RowID, b.RowID) })
	if err := s.changedRuns(ctx, next, ch, newRuns, touched); err != nil {
		return nil, cur, err
	}
	next.marks["part"] = tops["part"]
	if err := s.permissionChanges(ctx, next, ch); err != nil {
		return nil, cur, err
	}
	if next.ident, err = s.ident(ctx, next.marks); err != nil {
		return nil, cur, err
	}
	return ch, next, nil
}

// advance is a table's next mark: the last row read when a page was full
// (More), else the probed top.
func advance(ch *store.Changes, n int, top int64, last func() int64) int64 {
	if n == sqlitex.ChangesPage {
		ch.More = true
		return last()
	}
	return top
}

// messageRuns is the session of each message read.
func (s *Store) messageRuns(ctx context.Context, msgs []msgRow) (map[string]string, error) {
	out := map[string]string{}
	if len(msgs) == 0 {
		return out, nil
	}
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.rowid
	}
	err := s.eachRow(ctx, "SELECT id, session_id FROM message WHERE rowid IN ("+sqlitex.IDList(ids)+")", nil, func(r *sql.Rows) error {
		var id, run string
		err := r.Scan(&id, &run)
		out[id] = run
		return err
	})
	return out, err
}

// liveTurns hands out the pending row of each turn in flight when it is
// newer than the one last sent for it: a new part or a tool's next state.
// They come after the finished turns, whose rows are older.
func (s *Store) liveTurns(ctx context.Context, next *Cursor, ch *store.Changes, flying []msgRow) error {
	for _, m := range flying {
		t, err := s.turnOf(ctx, next.open[m.id], m, true)
		if err != nil {
			return err
		}
		if t == nil || !t.live {
			continue
		}
		if r := t.rows()[0]; r.RowID > next.sent[m.id] {
			ch.Steps = append(ch.Steps, r)
			next.sent[m.id] = r.RowID
		}
	}
	return nil
}

// readyTurn hands out a finished assistant message's turn.
func (s *Store) readyTurn(ctx context.Context, ch *store.Changes, run string, m msgRow) error {
	t, err := s.turnOf(ctx, run, m, true)
	if err != nil || t == nil {
		return err
	}
	ch.Steps = append(ch.Steps, t.rows()...)
	ch.Calls = append(ch.Calls, t.providerCalls()...)
	ch.Context = append(ch.Context, t.contextSamples()...)
	return nil
}

// changedRuns sends the new sessions, and the sessions this refresh
// touched or that were running, when what is said of them changed.
func (s *Store) changedRuns(ctx context.Context, next *Cursor, ch *store.Changes, fresh []session, touched map[string]bool) error {
	seen := map[string]bool{}
	send := func(x session) error {
		seen[x.run.ID] = true
		var err error
		if x.run.Depth, err = s.depth(ctx, x.run.ParentID); err != nil {
			return err
		}
		was, running := next.sessions[x.run.ID]
		if x.run.Status.Ended() {
			delete(next.sessions, x.run.ID)
		} else {
			next.sessions[x.run.ID] = sig(x.run)
		}
		if !running || was != sig(x.run) {
			r := x.run
			uncounted(&r) // its turns come through Changes
			ch.Runs = append(ch.Runs, r)
		}
		return nil
	}
	for _, x := range fresh {
		delete(next.sessions, x.run.ID) // new here: always sent
		if err := send(x); err != nil {
			return err
		}
	}
	ids := map[string]bool{}
	for id := range touched {
		ids[id] = true
	}
	for id := range next.sessions {
		ids[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		if seen[id] || id == "" {
			continue
		}
		rows, err := s.changedSessions(ctx, "WHERE s.id = ?", id)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			delete(next.sessions, id)
			continue
		}
		if _, running := next.sessions[id]; !running {
			next.sessions[id] = "" // touched while ended (a new prompt): send it
		}
		if err := send(rows[0]); err != nil {
			return err
		}
	}
	return nil
}
