package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"

	"github.com/vigil-run/vigil/internal/cow"
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// SQLCursor is an io-harness store's cursor: the highest row id seen in
// each append-only table, plus the few rows that can still change in place
// (unfinished runs, undecided requests, turns whose provider count has not
// arrived). Each refresh then costs O(new rows + open rows), never O(store).
//
// A cursor is never changed once Head or Changes has returned it. Changes
// works on a fork whose maps share the old cursor's entries until written
// (internal/cow), so a refresh that finds nothing copies nothing.
type SQLCursor struct {
	marks      map[string]int64                    // one entry per tailed table: copied whole
	open       cow.Map[int64, string]              // unfinished run → runSig as last seen
	pending    cow.Map[store.RequestKey, struct{}] // undecided requests
	unreported cow.Map[int64, int64]               // assembled context row with no provider count → its run
	leaseSig   string                              // the lease table as last seen
	ident      string                              // what the rows at the runs and steps marks hold (see ident)
}

// fork is the cursor Changes writes: the same position, sharing c's
// entries until it changes them.
func (c *SQLCursor) fork() *SQLCursor {
	return &SQLCursor{marks: maps.Clone(c.marks), open: c.open.Fork(), pending: c.pending.Fork(),
		unreported: c.unreported.Fork(), leaseSig: c.leaseSig, ident: c.ident}
}

// CursorFormat names the source kind the cursor belongs to.
func (c *SQLCursor) CursorFormat() string { return Format }

// Mark is the highest row id the cursor has seen in a table.
func (c *SQLCursor) Mark(table string) int64 { return c.marks[table] }

var cursorTables = []string{"runs", "steps", "context_events", "agent_events", "provider_calls", "pending_approvals", "pending_questions", "plans"}

// Head returns a cursor at the store's current end. Load what the screen
// needs after taking it: rows that land in between come again from Changes,
// and readers key them by row id.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	c := &SQLCursor{}
	tops, sig, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	c.marks, c.leaseSig = tops, sig
	if c.ident, err = s.ident(ctx, c.marks); err != nil {
		return nil, err
	}
	runs, err := s.queryRuns(ctx, s.runSelect(1, "WHERE "+s.openRunsWhere()))
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		c.open.Set(runNum(r.ID), runSig(r))
	}
	reqs, err := s.Requests(ctx, true)
	if err != nil {
		return nil, err
	}
	for _, r := range reqs {
		c.pending.Set(r.Key(), struct{}{})
	}
	// A provider count lands on the newest turn of a live run shortly after
	// it is written: only each open run's newest turn in the last chunk of
	// rows can still be waiting for one.
	if s.schema.has("context_events") && c.open.Len() > 0 {
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT MAX(id), run_id FROM context_events WHERE id > ? AND kind = 'assembled'
			AND run_id IN (%s) GROUP BY run_id`, sqlitex.IDList(slices.Sorted(c.open.Keys()))),
			[]any{c.marks["context_events"] - scanChunk}, func(r *sql.Rows) error {
				var id, run int64
				err := r.Scan(&id, &run)
				c.unreported.Set(id, run)
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// openRunsWhere selects runs that can still change: running or paused, or
// parked on a question (io-harness marks that one completed).
func (s *Store) openRunsWhere() string {
	if !s.schema.hasCol("runs", "status") {
		return "r.outcome IS NULL"
	}
	return "(r.status IN ('running', 'paused') OR r.outcome = 'awaiting_answer')"
}

// runSig is what can change in place on a run row, as one string; the
// SQL in runSigSelect builds the same string.
func runSig(r store.Run) string {
	fin := ""
	if r.Summary != nil {
		fin = r.Summary.FinishedAt.Format(isoMillis)
	}
	return string(r.Status) + "|" + string(r.Outcome) + "|" + r.Provider + "|" + fin
}

func (s *Store) runSigSelect(where string) string {
	si := s.schema
	fin := "''"
	join := ""
	if si.has("run_outcomes") {
		// runSig includes the finish time only for runs that have ended.
		fin = fmt.Sprintf("CASE WHEN %s IN ('running', 'paused') THEN '' ELSE COALESCE(o.finished_at, '') END",
			si.col("runs", "status", "CASE WHEN r.outcome IS NULL THEN 'running' ELSE 'completed' END"))
		join = "LEFT JOIN run_outcomes o ON o.run_id = r.id"
	}
	return fmt.Sprintf("SELECT r.id, %s || '|' || COALESCE(r.outcome, '') || '|' || COALESCE(%s, '') || '|' || %s FROM runs r %s %s",
		si.col("runs", "status", "CASE WHEN r.outcome IS NULL THEN 'running' ELSE 'completed' END"),
		si.col("runs", "provider", "NULL"), fin, join, where)
}

// isOpen reports a run whose row can still change in place.
func isOpen(r store.Run) bool {
	return r.Status == store.StatusRunning || r.Status == "" || r.Parked()
}

// Changes returns what was added or changed since cur, and the cursor that
// follows it; cur itself is left as it was (on an error, Changes returns
// it). Every read is its own short autocommit query: nothing is held open
// between calls. Leaf tables are read before runs, so a step or request
// seen here never names a run this call has not also seen.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*SQLCursor)
	if !ok || c == nil {
		return nil, cur, fmt.Errorf("a %s cursor cannot read an io-harness store", cursorName(cur))
	}
	ch := &store.Changes{}
	tops, leaseSig, err := s.probe(ctx)
	if err != nil {
		return nil, cur, err
	}
	if tops["runs"] < c.marks["runs"] || tops["steps"] < c.marks["steps"] {
		ch.Reset = true // another, shorter store now sits at the path
		return ch, cur, nil
	}
	if id, err := s.ident(ctx, c.marks); err != nil {
		return nil, cur, err
	} else if id != c.ident {
		ch.Reset = true // another store, as long or longer, was written over this one in place
		return ch, cur, nil
	}
	next := c.fork()
	grew := func(table string) bool { return tops[table] > c.marks[table] }
	if grew("steps") {
		if err := s.newSteps(ctx, next, ch); err != nil {
			return nil, cur, err
		}
	}
	if err := s.newContext(ctx, next, ch, grew("context_events")); err != nil {
		return nil, cur, err
	}
	if grew("agent_events") {
		if err := s.newAgentEvents(ctx, next, ch); err != nil {
			return nil, cur, err
		}
	}
	if grew("provider_calls") {
		if err := s.newCalls(ctx, next, ch); err != nil {
			return nil, cur, err
		}
	}
	if err := s.newRequests(ctx, next, ch, grew); err != nil {
		return nil, cur, err
	}
	if err := s.changedRuns(ctx, next, ch, grew("runs")); err != nil {
		return nil, cur, err
	}
	if leaseSig != next.leaseSig {
		leases, err := s.leases(ctx)
		if err != nil {
			return nil, cur, err
		}
		next.leaseSig, ch.Leases, ch.LeasesChanged = leaseSig, leases, true
	}
	if next.marks["runs"] != c.marks["runs"] || next.marks["steps"] != c.marks["steps"] {
		if next.ident, err = s.ident(ctx, next.marks); err != nil {
			return nil, cur, err
		}
	}
	return ch, next, nil
}

// ident is what the rows at the runs and steps marks hold, in parts no
// writer changes in place (a run's goal and file, a step's run, number and
// decision): while it reads the same, the store at the path is the one the
// cursor was made on, grown or not. A store written over it in place — cp
// of another store, a backup put back — is told apart even when it is as
// long or longer.
func (s *Store) ident(ctx context.Context, marks map[string]int64) (string, error) {
	var run, step string
	err := s.eachRow(ctx, `SELECT COALESCE((SELECT goal || char(31) || file FROM runs WHERE id = ?), ''),
		COALESCE((SELECT run_id || char(31) || step || char(31) || decision FROM steps WHERE id = ?), '')`,
		[]any{marks["runs"], marks["steps"]}, func(r *sql.Rows) error { return r.Scan(&run, &step) })
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write([]byte(run))
	h.Write([]byte{0})
	h.Write([]byte(step))
	return fmt.Sprintf("%x", h.Sum64()), nil
}

// probe reads, in one statement, the highest row id of every tailed table
// and a signature of the lease table: most refreshes then skip the tables
// that did not grow.
func (s *Store) probe(ctx context.Context) (map[string]int64, string, error) {
	var tables []string
	for _, t := range cursorTables {
		if s.schema.has(t) {
			tables = append(tables, t)
		}
	}
	lease := ""
	if s.schema.has("run_leases") {
		lease = "(SELECT COALESCE(group_concat(run_id || '/' || owner || '/' || generation || '/' || renewed_at || '/' || ttl_secs, ';'), '') FROM run_leases)"
	}
	tops, sig, err := sqlitex.Tops(ctx, &s.stmts, s.read, "id", tables, lease)
	if err != nil {
		return nil, "", mapDriverErr(s.path, err)
	}
	return tops, sig, nil
}

// cursorName names a cursor's format for an error about it.
func cursorName(c store.Cursor) string {
	if c == nil {
		return "nil"
	}
	return c.CursorFormat()
}

func (s *Store) newSteps(ctx context.Context, c *SQLCursor, ch *store.Changes) error {
	q := fmt.Sprintf("SELECT id, run_id, step, %s FROM steps WHERE id > ? ORDER BY id LIMIT %d", stepRowCols, sqlitex.ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["steps"]}, func(r *sql.Rows) error {
		x, _, err := scanStepRow(r)
		if err != nil {
			return err
		}
		ch.Steps = append(ch.Steps, x)
		c.marks["steps"] = x.RowID
		return nil
	})
	ch.More = ch.More || len(ch.Steps) == sqlitex.ChangesPage
	return err
}

func (s *Store) newContext(ctx context.Context, c *SQLCursor, ch *store.Changes, grew bool) error {
	if !s.schema.has("context_events") {
		return nil
	}
	// Provider counts that arrived for turns we saw without one.
	if c.unreported.Len() > 0 {
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT id, run_id, step, est_tokens, reported_tokens, detail FROM context_events
			WHERE id IN (%s) AND reported_tokens IS NOT NULL`, sqlitex.IDList(slices.Sorted(c.unreported.Keys()))), nil, func(r *sql.Rows) error {
			cs, _, _, err := scanSample(r)
			if err != nil {
				return err
			}
			c.unreported.Delete(cs.RowID)
			ch.Context = append(ch.Context, cs)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if !grew {
		return nil
	}
	n := 0
	q := fmt.Sprintf("SELECT id, run_id, step, est_tokens, reported_tokens, detail, kind FROM context_events WHERE id > ? ORDER BY id LIMIT %d", sqlitex.ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["context_events"]}, func(r *sql.Rows) error {
		var cs store.ContextSample
		var run int64
		var est, rep sql.NullInt64
		var detail sql.NullString
		var kind string
		if err := r.Scan(&cs.RowID, &run, &cs.Step, &est, &rep, &detail, &kind); err != nil {
			return err
		}
		n++
		c.marks["context_events"] = cs.RowID
		if kind != ContextAssembled {
			return nil
		}
		cs.RunID, cs.Estimated, cs.NoEstimate, cs.Reported, cs.Detail = idStr(run), est.Int64, !est.Valid, nullInt(rep), detail.String
		// A newer turn makes the run's older unreported turn final: its
		// count is missing for good.
		dropUnreported(c, run)
		if cs.Reported == nil {
			c.unreported.Set(cs.RowID, run)
		}
		ch.Context = append(ch.Context, cs)
		return nil
	})
	ch.More = ch.More || n == sqlitex.ChangesPage
	return err
}

func (s *Store) newAgentEvents(ctx context.Context, c *SQLCursor, ch *store.Changes) error {
	if !s.schema.has("agent_events") {
		return nil
	}
	q := fmt.Sprintf("SELECT id, run_id, step, kind, child_run_id, detail, tokens, remaining FROM agent_events WHERE id > ? ORDER BY id LIMIT %d", sqlitex.ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["agent_events"]}, func(r *sql.Rows) error {
		var e store.AgentEvent
		var run int64
		var child, tokens, remaining sql.NullInt64
		var detail sql.NullString
		if err := r.Scan(&e.RowID, &run, &e.Step, &e.Kind, &child, &detail, &tokens, &remaining); err != nil {
			return err
		}
		e.RunID, e.ChildRunID, e.Detail = idStr(run), nullIDStr(child), detail.String
		e.Tokens, e.Remaining = nullInt(tokens), nullInt(remaining)
		ch.AgentEvents = append(ch.AgentEvents, e)
		c.marks["agent_events"] = e.RowID
		return nil
	})
	ch.More = ch.More || len(ch.AgentEvents) == sqlitex.ChangesPage
	return err
}

func (s *Store) newCalls(ctx context.Context, c *SQLCursor, ch *store.Changes) error {
	q := fmt.Sprintf("SELECT %s FROM provider_calls WHERE id > ? ORDER BY id LIMIT %d", providerCallCols, sqlitex.ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["provider_calls"]}, func(r *sql.Rows) error {
		pc, err := scanProviderCall(r)
		ch.Calls = append(ch.Calls, pc)
		c.marks["provider_calls"] = pc.RowID
		return err
	})
	ch.More = ch.More || len(ch.Calls) == sqlitex.ChangesPage
	return err
}

var requestTables = map[store.RequestKind]string{store.Approval: "pending_approvals", store.Question: "pending_questions", store.Plan: "plans"}

func (s *Store) newRequests(ctx context.Context, c *SQLCursor, ch *store.Changes, grew func(string) bool) error {
	var fresh []store.Request
	for _, kind := range []store.RequestKind{store.Approval, store.Question, store.Plan} {
		table := requestTables[kind]
		if !s.schema.has(table) {
			continue
		}
		// Known undecided requests: did someone decide them?
		var ids []int64
		for k := range c.pending.Keys() {
			if k.Kind == kind {
				ids = append(ids, runNum(k.ID))
			}
		}
		if len(ids) > 0 {
			reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id IN (%s)", sqlitex.IDList(ids)))
			if err != nil {
				return err
			}
			seen := map[store.RequestKey]bool{}
			for _, r := range reqs {
				seen[r.Key()] = true
				if r.Resolved {
					c.pending.Delete(r.Key())
					fresh = append(fresh, r)
				}
			}
			for _, id := range ids { // a row that vanished (rewind, session deleted)
				k := store.RequestKey{Kind: kind, ID: idStr(id)}
				if !seen[k] {
					c.pending.Delete(k)
				}
			}
		}
		if !grew(table) {
			continue
		}
		reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id > ? ORDER BY id LIMIT %d", sqlitex.ChangesPage), c.marks[table])
		if err != nil {
			return err
		}
		for _, r := range reqs {
			c.marks[table] = runNum(r.ID)
			if !r.Resolved {
				c.pending.Set(r.Key(), struct{}{})
			}
			fresh = append(fresh, r)
		}
		ch.More = ch.More || len(reqs) == sqlitex.ChangesPage
	}
	if err := s.fillApprovalTimes(ctx, fresh); err != nil {
		return err
	}
	if err := s.fillAncestry(ctx, fresh); err != nil {
		return err
	}
	ch.Requests = fresh
	return nil
}

// requestsWhere reads requests of one kind; the WHERE tail holds integers
// only, and parameters for the rest.
func (s *Store) requestsWhere(ctx context.Context, kind store.RequestKind, tail string, args ...any) ([]store.Request, error) {
	var cols string
	switch kind {
	case store.Approval:
		cols = fmt.Sprintf("id, run_id, step, act, target, substr(content, 1, %d), length(CAST(content AS BLOB)), resolved", store.MaxContentBytes)
	case store.Question:
		cols = "id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at"
	case store.Plan:
		cols = "id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at"
	}
	var out []store.Request
	err := s.eachRow(ctx, "SELECT "+cols+" FROM "+requestTables[kind]+" WHERE "+tail, args, func(r *sql.Rows) error {
		req, err := scanRequest(kind, r)
		out = append(out, req)
		return err
	})
	return out, err
}

func (s *Store) changedRuns(ctx context.Context, c *SQLCursor, ch *store.Changes, grew bool) error {
	// Open runs first, then new ones: a run that starts and finishes between
	// two calls is reported once, as it is now.
	if c.open.Len() > 0 {
		// A light look at the open runs first; whole rows only for those that
		// changed.
		var changed []int64
		err := s.eachRow(ctx, s.runSigSelect("WHERE r.id IN ("+sqlitex.IDList(slices.Sorted(c.open.Keys()))+")"), nil, func(r *sql.Rows) error {
			var id int64
			var sig string
			if err := r.Scan(&id, &sig); err != nil {
				return err
			}
			if was, _ := c.open.Get(id); sig != was {
				changed = append(changed, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+sqlitex.IDList(changed)+")"))
			if err != nil {
				return err
			}
			for _, r := range runs {
				id := runNum(r.ID)
				ch.Runs = append(ch.Runs, r)
				if !isOpen(r) {
					c.open.Delete(id)
					dropUnreported(c, id)
				} else {
					c.open.Set(id, runSig(r))
				}
			}
		}
	}
	if !grew {
		return nil
	}
	runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id > ?"), c.marks["runs"])
	if err != nil {
		return err
	}
	sort.Slice(runs, func(i, j int) bool { return runNum(runs[i].ID) < runNum(runs[j].ID) })
	for _, r := range runs {
		id := runNum(r.ID)
		c.marks["runs"] = id
		if isOpen(r) {
			c.open.Set(id, runSig(r))
		}
		ch.Runs = append(ch.Runs, r)
	}
	return nil
}

// dropUnreported forgets a run's turns still waiting for a provider count:
// a newer turn (or the run's end) makes their count missing for good.
func dropUnreported(c *SQLCursor, run int64) {
	var rows []int64
	for row, r := range c.unreported.All() {
		if r == run {
			rows = append(rows, row)
		}
	}
	for _, row := range rows {
		c.unreported.Delete(row)
	}
}
