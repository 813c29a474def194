package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// ChangesPage caps the rows one Changes call reads from each table; when a
// table had more, Changes.More asks the caller to call again.
const ChangesPage = 2000

// Cursor marks how far a reader has read the store: the highest row id seen
// in each append-only table, plus the few rows that can still change in
// place (unfinished runs, undecided requests, turns whose provider count has
// not arrived). Each refresh then costs O(new rows + open rows), never
// O(store).
type Cursor struct {
	marks      map[string]int64
	open       map[int64]string    // unfinished run → status|outcome|provider as last seen
	pending    map[RequestKey]bool // undecided requests
	unreported map[int64]int64     // assembled context row with no provider count → its run
	leaseSig   string              // the lease table as last seen
}

// Mark is the highest row id the cursor has seen in a table.
func (c *Cursor) Mark(table string) int64 { return c.marks[table] }

// Changes is what a refresh found.
type Changes struct {
	Runs        []Run           // new runs, and open runs whose status, outcome or summary changed
	Steps       []StepRow       // new step rows, in row order
	Context     []ContextSample // new turns, and turns whose provider count arrived
	Requests    []Request       // new requests, and known ones that have been decided
	AgentEvents []AgentEvent    // new tree events
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
		len(c.AgentEvents) == 0 && !c.LeasesChanged && !c.Reset
}

var cursorTables = []string{"runs", "steps", "context_events", "agent_events", "pending_approvals", "pending_questions", "plans"}

// Head returns a cursor at the store's current end. Load what the screen
// needs after taking it: rows that land in between come again from Changes,
// and readers key them by row id.
func (s *Store) Head(ctx context.Context) (*Cursor, error) {
	c := &Cursor{marks: map[string]int64{}, open: map[int64]string{}, pending: map[RequestKey]bool{}, unreported: map[int64]int64{}}
	for _, t := range cursorTables {
		if !s.schema.has(t) {
			continue
		}
		var top int64
		if err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM "+t).Scan(&top); err != nil {
			return nil, mapDriverErr(s.path, err)
		}
		c.marks[t] = top
	}
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
	// it is written: only the last chunk of rows can still be waiting.
	if s.schema.has("context_events") && len(c.open) > 0 {
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT id, run_id FROM context_events WHERE id > ? AND kind = 'assembled'
			AND reported_tokens IS NULL AND run_id IN (%s)`, idList(mapKeys(c.open))),
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
	if _, sig, err := s.leaseTable(ctx); err != nil {
		return nil, err
	} else {
		c.leaseSig = sig
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

func runSig(r Run) string {
	sum := ""
	if r.Summary != nil {
		sum = r.Summary.FinishedAt.String()
	}
	return r.Status + "|" + r.Outcome + "|" + r.Provider + "|" + sum
}

func isOpen(r Run) bool {
	return r.Status == "running" || r.Status == "paused" || r.Outcome == "awaiting_answer" || r.Status == ""
}

// Changes returns what was added or changed since the cursor and advances
// it. Every read is its own short autocommit query: nothing is held open
// between calls. Leaf tables are read before runs, so a step or request
// seen here never names a run this call has not also seen.
func (s *Store) Changes(ctx context.Context, c *Cursor) (*Changes, error) {
	next := c.clone()
	ch := &Changes{}
	if reset, err := s.rewound(ctx, c); err != nil || reset {
		ch.Reset = reset
		return ch, err
	}
	if err := s.newSteps(ctx, next, ch); err != nil {
		return nil, err
	}
	if err := s.newContext(ctx, next, ch); err != nil {
		return nil, err
	}
	if err := s.newAgentEvents(ctx, next, ch); err != nil {
		return nil, err
	}
	if err := s.newRequests(ctx, next, ch); err != nil {
		return nil, err
	}
	if err := s.changedRuns(ctx, next, ch); err != nil {
		return nil, err
	}
	leases, sig, err := s.leaseTable(ctx)
	if err != nil {
		return nil, err
	}
	if sig != next.leaseSig {
		next.leaseSig, ch.Leases, ch.LeasesChanged = sig, leases, true
	}
	*c = *next
	return ch, nil
}

func (c *Cursor) clone() *Cursor {
	n := &Cursor{marks: map[string]int64{}, open: map[int64]string{}, pending: map[RequestKey]bool{},
		unreported: map[int64]int64{}, leaseSig: c.leaseSig}
	for k, v := range c.marks {
		n.marks[k] = v
	}
	for k, v := range c.open {
		n.open[k] = v
	}
	for k, v := range c.pending {
		n.pending[k] = v
	}
	for k, v := range c.unreported {
		n.unreported[k] = v
	}
	return n
}

// rewound reports a store whose row ids went backwards: another file now
// sits at the path.
func (s *Store) rewound(ctx context.Context, c *Cursor) (bool, error) {
	var runs, steps int64
	err := s.read.QueryRowContext(ctx, "SELECT (SELECT COALESCE(MAX(id), 0) FROM runs), (SELECT COALESCE(MAX(id), 0) FROM steps)").Scan(&runs, &steps)
	if err != nil {
		return false, mapDriverErr(s.path, err)
	}
	return runs < c.marks["runs"] || steps < c.marks["steps"], nil
}

func (s *Store) newSteps(ctx context.Context, c *Cursor, ch *Changes) error {
	q := fmt.Sprintf("SELECT id, run_id, step, decision, substr(tool_call, 1, %d), tokens FROM steps WHERE id > ? ORDER BY id LIMIT %d",
		toolCallSummaryBytes, ChangesPage)
	err := s.eachRow(ctx, q, []any{c.marks["steps"]}, func(r *sql.Rows) error {
		var x StepRow
		var run int64
		if err := r.Scan(&x.RowID, &run, &x.Number, &x.Decision, &x.ToolCall, &x.Tokens); err != nil {
			return err
		}
		x.RunID = idStr(run)
		ch.Steps = append(ch.Steps, x)
		c.marks["steps"] = x.RowID
		return nil
	})
	ch.More = ch.More || len(ch.Steps) == ChangesPage
	return err
}

func (s *Store) newContext(ctx context.Context, c *Cursor, ch *Changes) error {
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
		cs.RunID, cs.Estimated, cs.Reported, cs.Detail = idStr(run), est.Int64, nullInt(rep), detail.String
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

func (s *Store) newAgentEvents(ctx context.Context, c *Cursor, ch *Changes) error {
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

var requestTables = map[RequestKind]string{Approval: "pending_approvals", Question: "pending_questions", Plan: "plans"}

func (s *Store) newRequests(ctx context.Context, c *Cursor, ch *Changes) error {
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
		reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id > %d ORDER BY id LIMIT %d", c.marks[table], ChangesPage))
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
	if err := s.fillAncestry(ctx, fresh); err != nil {
		return err
	}
	ch.Requests = fresh
	return nil
}

// requestsWhere reads requests of one kind with a raw WHERE tail built from
// integers only.
func (s *Store) requestsWhere(ctx context.Context, kind RequestKind, tail string) ([]Request, error) {
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
	err := s.eachRow(ctx, "SELECT "+cols+" FROM "+requestTables[kind]+" WHERE "+tail, nil, func(r *sql.Rows) error {
		req, err := scanRequest(kind, r)
		out = append(out, req)
		return err
	})
	return out, err
}

func (s *Store) changedRuns(ctx context.Context, c *Cursor, ch *Changes) error {
	// Open runs first, then new ones: a run that starts and finishes between
	// two calls is reported once, as it is now.
	if len(c.open) > 0 {
		runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+idList(mapKeys(c.open))+")"))
		if err != nil {
			return err
		}
		for _, r := range runs {
			id := runNum(r.ID)
			if sig := runSig(r); sig != c.open[id] {
				ch.Runs = append(ch.Runs, r)
				c.open[id] = sig
			}
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
	runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, fmt.Sprintf("WHERE r.id > %d", c.marks["runs"])))
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

// leaseTable reads every lease and a signature to tell whether any changed.
func (s *Store) leaseTable(ctx context.Context) (map[string]Lease, string, error) {
	leases, err := s.leases(ctx)
	if err != nil {
		return nil, "", err
	}
	keys := make([]string, 0, len(leases))
	for k := range leases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		l := leases[k]
		fmt.Fprintf(&b, "%s=%s/%d/%d/%d;", k, l.Owner, l.Generation, l.RenewedAt.UnixMilli(), l.TTL)
	}
	return leases, b.String(), nil
}

func mapKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
