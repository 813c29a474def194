package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"sort"
	"strings"
)

// ChangesPage caps the rows one Changes call reads from each table; when a
// table had more, Changes.More asks the caller to call again.
const ChangesPage = 2000

// Cursor marks how far a reader has read a source. Only the source that
// made it understands it.
type Cursor interface {
	CursorFormat() string
}

// SQLCursor is an io-harness store's cursor: the highest row id seen in
// each append-only table, plus the few rows that can still change in place
// (unfinished runs, undecided requests, turns whose provider count has not
// arrived). Each refresh then costs O(new rows + open rows), never O(store).
type SQLCursor struct {
	marks      map[string]int64
	open       map[int64]string    // unfinished run → status|outcome|provider as last seen
	pending    map[RequestKey]bool // undecided requests
	unreported map[int64]int64     // assembled context row with no provider count → its run
	leaseSig   string              // the lease table as last seen
}

// CursorFormat names the source kind the cursor belongs to.
func (c *SQLCursor) CursorFormat() string { return Format }

// Mark is the highest row id the cursor has seen in a table.
func (c *SQLCursor) Mark(table string) int64 { return c.marks[table] }

// Changes is what a refresh found.
type Changes struct {
	Runs        []Run           // new runs, and open runs whose status, outcome or summary changed
	Steps       []StepRow       // new step rows, in row order
	Context     []ContextSample // new turns, and turns whose provider count arrived
	Requests    []Request       // new requests, and known ones that have been decided
	AgentEvents []AgentEvent    // new tree events
	Calls       []ProviderCall  // new provider attempts (they time the steps)
	Leases      map[string]Lease
	// LeasesChanged says Leases is the whole, new lease table.
	LeasesChanged bool
	// More says a table had more new rows than one page: call again.
	More bool
	// Reset says the store is not the one the cursor was made on (it was
	// replaced or rewound): drop everything and load it again.
	Reset bool
}

// Empty reports whether the refresh found nothing.
func (c *Changes) Empty() bool {
	return len(c.Runs) == 0 && len(c.Steps) == 0 && len(c.Context) == 0 && len(c.Requests) == 0 &&
		len(c.AgentEvents) == 0 && len(c.Calls) == 0 && !c.LeasesChanged && !c.Reset
}

var cursorTables = []string{"runs", "steps", "context_events", "agent_events", "provider_calls", "pending_approvals", "pending_questions", "plans"}

// Head returns a cursor at the store's current end. Load what the screen
// needs after taking it: rows that land in between come again from Changes,
// and readers key them by row id.
func (s *Store) Head(ctx context.Context) (Cursor, error) {
	c := &SQLCursor{marks: map[string]int64{}, open: map[int64]string{}, pending: map[RequestKey]bool{}, unreported: map[int64]int64{}}
	tops, sig, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	c.marks, c.leaseSig = tops, sig
	runs, err := s.queryRuns(ctx, s.runSelect(1, "WHERE "+s.openRunsWhere()))
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		c.open[runNum(r.ID)] = runSig(r)
	}
	reqs, err := s.Requests(ctx, true)
	if err != nil {
		return nil, err
	}
	for _, r := range reqs {
		c.pending[r.Key()] = true
	}
	// A provider count lands on the newest turn of a live run shortly after
	// it is written: only each open run's newest turn in the last chunk of
	// rows can still be waiting for one.
	if s.schema.has("context_events") && len(c.open) > 0 {
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT MAX(id), run_id FROM context_events WHERE id > ? AND kind = 'assembled'
			AND run_id IN (%s) GROUP BY run_id`, idList(mapKeys(c.open))),
			[]any{c.marks["context_events"] - scanChunk}, func(r *sql.Rows) error {
				var id, run int64
				err := r.Scan(&id, &run)
				c.unreported[id] = run
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
func runSig(r Run) string {
	fin := ""
	if r.Summary != nil {
		fin = r.Summary.FinishedAt.Format(isoMillis)
	}
	return r.Status + "|" + r.Outcome + "|" + r.Provider + "|" + fin
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

func isOpen(r Run) bool {
	return r.Status == "running" || r.Status == "paused" || r.Outcome == "awaiting_answer" || r.Status == ""
}

// Changes returns what was added or changed since the cursor and advances
// it. Every read is its own short autocommit query: nothing is held open
// between calls. Leaf tables are read before runs, so a step or request
// seen here never names a run this call has not also seen.
func (s *Store) Changes(ctx context.Context, cur Cursor) (*Changes, error) {
	c, ok := cur.(*SQLCursor)
	if !ok {
		return nil, fmt.Errorf("a %s cursor cannot read an io-harness store", cur.CursorFormat())
	}
	next := c.clone()
	ch := &Changes{}
	tops, leaseSig, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	if tops["runs"] < c.marks["runs"] || tops["steps"] < c.marks["steps"] {
		ch.Reset = true // another, shorter store now sits at the path
		return ch, nil
	}
	grew := func(table string) bool { return tops[table] > c.marks[table] }
	if grew("steps") {
		if err := s.newSteps(ctx, next, ch); err != nil {
			return nil, err
		}
	}
	if err := s.newContext(ctx, next, ch, grew("context_events")); err != nil {
		return nil, err
	}
	if grew("agent_events") {
		if err := s.newAgentEvents(ctx, next, ch); err != nil {
			return nil, err
		}
	}
	if grew("provider_calls") {
		if err := s.newCalls(ctx, next, ch); err != nil {
			return nil, err
		}
	}
	if err := s.newRequests(ctx, next, ch, grew); err != nil {
		return nil, err
	}
	if err := s.changedRuns(ctx, next, ch, grew("runs")); err != nil {
		return nil, err
	}
	if leaseSig != next.leaseSig {
		leases, err := s.leases(ctx)
		if err != nil {
			return nil, err
		}
		next.leaseSig, ch.Leases, ch.LeasesChanged = leaseSig, leases, true
	}
	*c = *next
	return ch, nil
}

// probe reads, in one statement, the highest row id of every tailed table
// and a signature of the lease table: most refreshes then skip the tables
// that did not grow.
func (s *Store) probe(ctx context.Context) (map[string]int64, string, error) {
	var parts []string
	var tables []string
	for _, t := range cursorTables {
		if s.schema.has(t) {
			tables = append(tables, t)
			parts = append(parts, "(SELECT COALESCE(MAX(id), 0) FROM "+t+")")
		}
	}
	lease := "''"
	if s.schema.has("run_leases") {
		lease = "(SELECT COALESCE(group_concat(run_id || '/' || owner || '/' || generation || '/' || renewed_at || '/' || ttl_secs, ';'), '') FROM run_leases)"
	}
	vals := make([]int64, len(tables))
	dest := make([]any, 0, len(tables)+1)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	var sig string
	dest = append(dest, &sig)
	st, err := s.prepared(ctx, "SELECT "+strings.Join(append(parts, lease), ", "))
	if err != nil {
		return nil, "", mapDriverErr(s.path, err)
	}
	if err := st.QueryRowContext(ctx).Scan(dest...); err != nil {
		return nil, "", mapDriverErr(s.path, err)
	}
	tops := map[string]int64{}
	for i, t := range tables {
		tops[t] = vals[i]
	}
	return tops, sig, nil
}

func (c *SQLCursor) clone() *SQLCursor {
	return &SQLCursor{marks: maps.Clone(c.marks), open: maps.Clone(c.open), pending: maps.Clone(c.pending),
		unreported: maps.Clone(c.unreported), leaseSig: c.leaseSig}
}

func (s *Store) newSteps(ctx context.Context, c *SQLCursor, ch *Changes) error {
	q := fmt.Sprintf("SELECT id, run_id, step, %s FROM steps WHERE id > ? ORDER BY id LIMIT %d", stepRowCols, ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["steps"]}, func(r *sql.Rows) error {
		x, _, err := scanStepRow(r)
		if err != nil {
			return err
		}
		ch.Steps = append(ch.Steps, x)
		c.marks["steps"] = x.RowID
		return nil
	})
	ch.More = ch.More || len(ch.Steps) == ChangesPage
	return err
}

func (s *Store) newContext(ctx context.Context, c *SQLCursor, ch *Changes, grew bool) error {
	if !s.schema.has("context_events") {
		return nil
	}
	// Provider counts that arrived for turns we saw without one.
	if len(c.unreported) > 0 {
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT id, run_id, step, est_tokens, reported_tokens, detail FROM context_events
			WHERE id IN (%s) AND reported_tokens IS NOT NULL`, idList(mapKeys(c.unreported))), nil, func(r *sql.Rows) error {
			cs, _, _, err := scanSample(r)
			if err != nil {
				return err
			}
			delete(c.unreported, cs.RowID)
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
	q := fmt.Sprintf("SELECT id, run_id, step, est_tokens, reported_tokens, detail, kind FROM context_events WHERE id > ? ORDER BY id LIMIT %d", ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["context_events"]}, func(r *sql.Rows) error {
		var cs ContextSample
		var run int64
		var est, rep sql.NullInt64
		var detail sql.NullString
		var kind string
		if err := r.Scan(&cs.RowID, &run, &cs.Step, &est, &rep, &detail, &kind); err != nil {
			return err
		}
		n++
		c.marks["context_events"] = cs.RowID
		if kind != "assembled" {
			return nil
		}
		cs.RunID, cs.Estimated, cs.NoEstimate, cs.Reported, cs.Detail = idStr(run), est.Int64, !est.Valid, nullInt(rep), detail.String
		// A newer turn makes the run's older unreported turn final: its
		// count is missing for good.
		for id, rr := range c.unreported {
			if rr == run {
				delete(c.unreported, id)
			}
		}
		if cs.Reported == nil {
			c.unreported[cs.RowID] = run
		}
		ch.Context = append(ch.Context, cs)
		return nil
	})
	ch.More = ch.More || n == ChangesPage
	return err
}

func (s *Store) newAgentEvents(ctx context.Context, c *SQLCursor, ch *Changes) error {
	if !s.schema.has("agent_events") {
		return nil
	}
	q := fmt.Sprintf("SELECT id, run_id, step, kind, child_run_id, detail, tokens, remaining FROM agent_events WHERE id > ? ORDER BY id LIMIT %d", ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["agent_events"]}, func(r *sql.Rows) error {
		var e AgentEvent
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
	ch.More = ch.More || len(ch.AgentEvents) == ChangesPage
	return err
}

func (s *Store) newCalls(ctx context.Context, c *SQLCursor, ch *Changes) error {
	q := fmt.Sprintf("SELECT %s FROM provider_calls WHERE id > ? ORDER BY id LIMIT %d", providerCallCols, ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["provider_calls"]}, func(r *sql.Rows) error {
		pc, err := scanProviderCall(r)
		ch.Calls = append(ch.Calls, pc)
		c.marks["provider_calls"] = pc.RowID
		return err
	})
	ch.More = ch.More || len(ch.Calls) == ChangesPage
	return err
}

var requestTables = map[RequestKind]string{Approval: "pending_approvals", Question: "pending_questions", Plan: "plans"}

func (s *Store) newRequests(ctx context.Context, c *SQLCursor, ch *Changes, grew func(string) bool) error {
	var fresh []Request
	for _, kind := range []RequestKind{Approval, Question, Plan} {
		table := requestTables[kind]
		if !s.schema.has(table) {
			continue
		}
		// Known undecided requests: did someone decide them?
		var ids []int64
		for k := range c.pending {
			if k.Kind == kind {
				ids = append(ids, runNum(k.ID))
			}
		}
		if len(ids) > 0 {
			reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id IN (%s)", idList(ids)))
			if err != nil {
				return err
			}
			seen := map[RequestKey]bool{}
			for _, r := range reqs {
				seen[r.Key()] = true
				if r.Resolved {
					delete(c.pending, r.Key())
					fresh = append(fresh, r)
				}
			}
			for _, id := range ids { // a row that vanished (rewind, session deleted)
				k := RequestKey{Kind: kind, ID: idStr(id)}
				if !seen[k] {
					delete(c.pending, k)
				}
			}
		}
		if !grew(table) {
			continue
		}
		reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id > ? ORDER BY id LIMIT %d", ChangesPage), c.marks[table])
		if err != nil {
			return err
		}
		for _, r := range reqs {
			c.marks[table] = runNum(r.ID)
			if !r.Resolved {
				c.pending[r.Key()] = true
			}
			fresh = append(fresh, r)
		}
		ch.More = ch.More || len(reqs) == ChangesPage
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
func (s *Store) requestsWhere(ctx context.Context, kind RequestKind, tail string, args ...any) ([]Request, error) {
	var cols string
	switch kind {
	case Approval:
		cols = fmt.Sprintf("id, run_id, step, act, target, substr(content, 1, %d), length(CAST(content AS BLOB)), resolved", MaxContentBytes)
	case Question:
		cols = "id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at"
	case Plan:
		cols = "id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at"
	}
	var out []Request
	err := s.eachRow(ctx, "SELECT "+cols+" FROM "+requestTables[kind]+" WHERE "+tail, args, func(r *sql.Rows) error {
		req, err := scanRequest(kind, r)
		out = append(out, req)
		return err
	})
	return out, err
}

func (s *Store) changedRuns(ctx context.Context, c *SQLCursor, ch *Changes, grew bool) error {
	// Open runs first, then new ones: a run that starts and finishes between
	// two calls is reported once, as it is now.
	if len(c.open) > 0 {
		// A light look at the open runs first; whole rows only for those that
		// changed.
		var changed []int64
		err := s.eachRow(ctx, s.runSigSelect("WHERE r.id IN ("+idList(mapKeys(c.open))+")"), nil, func(r *sql.Rows) error {
			var id int64
			var sig string
			if err := r.Scan(&id, &sig); err != nil {
				return err
			}
			if sig != c.open[id] {
				changed = append(changed, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+idList(changed)+")"))
			if err != nil {
				return err
			}
			for _, r := range runs {
				id := runNum(r.ID)
				ch.Runs = append(ch.Runs, r)
				c.open[id] = runSig(r)
				if !isOpen(r) {
					delete(c.open, id)
					for row, run := range c.unreported {
						if run == id {
							delete(c.unreported, row)
						}
					}
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
			c.open[id] = runSig(r)
		}
		ch.Runs = append(ch.Runs, r)
	}
	return nil
}

func mapKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
