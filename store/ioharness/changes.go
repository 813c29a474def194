package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vigil-run/vigil/internal/cow"
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// SQLCursor is an io-harness store's cursor: the highest row id seen in
// each append-only table, plus the few rows that can still change in place
// (unfinished runs, undecided requests, turns whose provider count has not
// arrived) and the small tables rewritten in place (leases, open tool
// attempts). Each refresh then costs O(new rows + open rows), never
// O(store).
//
// A cursor is never changed once Head or Changes has returned it. Changes
// works on a fork whose maps share the old cursor's entries until written
// (internal/cow), so a refresh that finds nothing copies nothing.
type SQLCursor struct {
	marks      map[string]int64                  // one entry per tailed table: copied whole
	open       cow.Map[int64, string]            // run whose row can still change → its row signature as last seen
	pending    cow.Map[store.RequestKey, string] // undecided request → its standing as last told
	unreported cow.Map[int64, int64]             // assembled context row with no provider count → its run
	life       cow.Map[int64, string]            // run with a lifecycle reading (lifeSig) → that reading as last told
	leaseSig   string                            // the lease table as last seen
	leases     map[string]store.Lease            // and its rows (never written: replaced whole)
	attemptSig string                            // the open tool attempts as last seen
	attempts   map[int64]*store.Recovery         // and which run each is of (replaced whole)
	schema     int64                             // PRAGMA schema_version as last seen
	ident      string                            // what the rows at the runs and steps marks hold (see ident)
	// openFrom, when above 0, says the open runs below this id are not
	// followed yet (HeadNewest): WholeHead adds them, and Changes refuses
	// such a cursor.
	openFrom int64
}

// fork is the cursor Changes writes: the same position, sharing c's
// entries until it changes them.
func (c *SQLCursor) fork() *SQLCursor {
	return &SQLCursor{marks: maps.Clone(c.marks), open: c.open.Fork(), pending: c.pending.Fork(),
		unreported: c.unreported.Fork(), life: c.life.Fork(), leaseSig: c.leaseSig, leases: c.leases,
		attemptSig: c.attemptSig, attempts: c.attempts, schema: c.schema, ident: c.ident, openFrom: c.openFrom}
}

// CursorFormat names the source kind the cursor belongs to.
func (c *SQLCursor) CursorFormat() string { return Format }

// Mark is the highest row id the cursor has seen in a table.
func (c *SQLCursor) Mark(table string) int64 { return c.marks[table] }

var cursorTables = []string{"runs", "steps", "context_events", "agent_events", "provider_calls", "pending_approvals", "pending_questions", "plans"}

// Head returns a cursor at the store's current end. Load what the screen
// needs after taking it: rows that land in between come again from Changes,
// and readers key them by row id.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) { return s.cursorAt(ctx, 0) }

var _ store.QuickHeader = (*Store)(nil)

// HeadNewest is Head for a first frame drawn from the newest runs
// (store.QuickHeader): its cursor follows in place only the open runs among
// the newest limit run rows. Finding the open runs is a scan of the whole
// runs table (nothing indexes status, and vigil adds no index): on 100 k
// runs most of Head. WholeHead adds the rest.
func (s *Store) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	cur, err := s.cursorAt(ctx, max(limit, 1))
	if err != nil {
		return nil, false, err
	}
	return cur, cur.(*SQLCursor).openFrom == 0, nil
}

// WholeHead returns cur following every open run, the ones HeadNewest left
// out read as they are now (store.QuickHeader). A cursor that already
// follows every run is returned as it is.
func (s *Store) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(*SQLCursor)
	if !ok || c == nil {
		return nil, fmt.Errorf("a %s cursor cannot read an io-harness store", cursorName(cur))
	}
	if c.openFrom == 0 {
		return c, nil
	}
	next := c.fork()
	next.openFrom = 0
	sigs, err := s.runSigs(ctx, nil, "WHERE "+s.openRunsWhere()+" AND r.id < ?", c.openFrom)
	if err != nil {
		return nil, err
	}
	for id, sig := range sigs {
		next.open.Set(id, sig)
	}
	if err := s.readUnreported(ctx, next, sigs); err != nil {
		return nil, err
	}
	return next, nil
}

// cursorAt is Head; with newest above 0 it follows only the open runs among
// the newest that many run rows (HeadNewest).
func (s *Store) cursorAt(ctx context.Context, newest int) (store.Cursor, error) {
	c := &SQLCursor{}
	p, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	c.marks, c.leaseSig, c.attemptSig, c.schema = p.tops, p.leaseSig, p.attemptSig, p.schema
	if newest > 0 {
		// The page is the newest run rows, whatever their ids: ids have gaps
		// (a pruned history, a harness that sets them), so the bound is the
		// id of the first row past the page, not the top id less the page.
		var past int64
		err := s.read.QueryRowContext(ctx, "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", newest).Scan(&past)
		switch {
		case err == nil:
			c.openFrom = past + 1
		case !errors.Is(err, sql.ErrNoRows):
			return nil, mapDriverErr(s.path, err)
		}
	}
	if c.ident, err = s.ident(ctx, c.marks); err != nil {
		return nil, err
	}
	if c.leases, err = s.leases(ctx); err != nil {
		return nil, err
	}
	if c.attempts, err = s.openAttempts(ctx, s.read); err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	where, args := "WHERE "+s.openRunsWhere(), []any(nil)
	if c.openFrom > 0 {
		where, args = where+" AND r.id >= ?", []any{c.openFrom}
	}
	sigs, err := s.runSigs(ctx, nil, where, args...)
	if err != nil {
		return nil, err
	}
	c.open = cow.Of(sigs) // the cursor's own: 100 k entries copied once fewer
	// Standings and lifecycle readings are not worked out here: the cursor
	// takes requests as open and runs as plain, and the first refresh that
	// touches one works it out and tells it (again, if the load already did).
	for _, kind := range []store.RequestKind{store.Approval, store.Question, store.Plan} {
		table := requestTables[kind]
		if !s.si().has(table) {
			continue
		}
		cond := "resolved = 0"
		if kind == store.Approval {
			cond = "resolved IS NULL"
		}
		err := s.eachRow(ctx, "SELECT id FROM "+table+" WHERE "+cond, nil, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			c.pending.Set(store.RequestKey{Kind: kind, ID: idStr(id)}, openSig)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if err := s.readUnreported(ctx, c, sigs); err != nil {
		return nil, err
	}
	return c, nil
}

// readUnreported notes, of the open runs in runs, each one's newest turn
// still waiting for its provider count. A provider count lands on the
// newest turn of a live run shortly after it is written: only each open
// run's newest turn in the last chunk of rows can still be waiting for one,
// and only if its count has not landed already (else the first refresh
// would tell it as arrived).
func (s *Store) readUnreported(ctx context.Context, c *SQLCursor, runs map[int64]string) error {
	if !s.si().has("context_events") || len(runs) == 0 {
		return nil
	}
	// Past manyIDs open runs the rows of every run are read and the
	// open ones kept: SQLite parsing 100 k literals cost more.
	in := ""
	if len(runs) <= manyIDs {
		in = "AND run_id IN (" + sqlitex.IDList(slices.Sorted(maps.Keys(runs))) + ")"
	}
	return s.eachRow(ctx, fmt.Sprintf(`SELECT id, run_id FROM context_events WHERE id IN (SELECT MAX(id) FROM context_events
		WHERE id > ? AND kind = 'assembled' %s GROUP BY run_id) AND reported_tokens IS NULL`, in),
		[]any{c.marks["context_events"] - scanChunk}, func(r *sql.Rows) error {
			var id, run int64
			err := r.Scan(&id, &run)
			if _, ok := runs[run]; ok {
				c.unreported.Set(id, run)
			}
			return err
		})
}

// openRunsWhere selects runs whose row can still change: running or paused,
// parked on a question (io-harness marks that one completed), or holding a
// lease (a resume drives a completed run with its status left as it was).
func (s *Store) openRunsWhere() string {
	leased := ""
	if s.si().has("run_leases") {
		leased = " OR r.id IN (SELECT run_id FROM run_leases)"
	}
	if !s.si().hasCol("runs", "status") {
		return "(r.outcome IS NULL" + leased + ")"
	}
	return "(r.status IN ('running', 'paused') OR r.outcome = 'awaiting_answer'" + leased + ")"
}

// isOpen reports a run whose row can still change in place.
func isOpen(r store.Run) bool {
	return r.Status == store.StatusRunning || r.Status == "" || r.Parked() || r.Lease != nil
}

// lifeSig is a run's lifecycle reading as one string ("" for none): what
// Changes re-sends a run for when it changes without its row changing.
func lifeSig(r store.Run) string {
	if !r.LeaselessDriver && !r.Reopened() && r.Recovery == nil {
		return ""
	}
	rec := ""
	if r.Recovery != nil {
		rec = r.Recovery.AttemptID
	}
	return fmt.Sprintf("%t|%t|%s", r.LeaselessDriver, r.Reopened(), rec)
}

// standingSig is a request's standing as one string.
func standingSig(r store.Request) string { return r.Standing.String() + "|" + r.StandingReason }

// openSig is the standing of an open request.
var openSig = standingSig(store.Request{})

func (s *Store) runSigSelect(where string) string {
	si := s.si()
	fin, join := "NULL", ""
	if si.has("run_outcomes") {
		fin, join = "o.finished_at", "LEFT JOIN run_outcomes o ON o.run_id = r.id"
	}
	return fmt.Sprintf("SELECT r.id, %s, r.outcome, %s, %s FROM runs r %s %s",
		si.col("runs", "status", "CASE WHEN r.outcome IS NULL THEN 'running' ELSE 'completed' END"),
		si.col("runs", "provider", "NULL"), fin, join, where)
}

// runSigs reads the signature of what can change in place on each run row
// (status, outcome, provider, and for a run that has ended its finish
// time) for the runs where selects and keep, when not nil, keeps. The
// columns are joined here, not by SQLite: its string concatenation took
// twice the read (100 k open runs: 630 ms, the columns alone 270).
func (s *Store) runSigs(ctx context.Context, keep func(id int64) bool, where string, args ...any) (map[int64]string, error) {
	out := map[int64]string{}
	var b []byte
	// Many open runs share one signature ("running||provider|"): one
	// string for them all, not one each for the cursor to hold.
	in := &interner{}
	sig := func(x cells) error {
		var c colConv
		id := cellInt(x, &c, 0)
		if c.err == nil && keep != nil && !keep(id) {
			return nil // no signature made for a run not asked about
		}
		status, outcome, provider, fin := x.peekStr(&c, 1).String, x.peekStr(&c, 2).String, x.peekStr(&c, 3).String, x.peekStr(&c, 4).String
		if c.err != nil {
			return c.err
		}
		if status == "running" || status == "paused" {
			fin = "" // only an ended run's finish time tells
		}
		b = append(append(append(append(append(append(append(b[:0], status...), '|'), outcome...), '|'), provider...), '|'), fin...)
		out[id] = in.str(b)
		return nil
	}
	buf := newRowBuf(5)
	return out, s.eachRow(ctx, s.runSigSelect(where), args, func(r *sql.Rows) error {
		x, err := buf.scan(r)
		if err != nil {
			return err
		}
		return sig(x)
	})
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
	if c.openFrom > 0 {
		// Which old runs changed since it was taken cannot be told: the
		// cursor never knew which were open. WholeHead first.
		return nil, cur, errors.New("a cursor from HeadNewest follows only the newest runs: make it whole (WholeHead) before reading changes")
	}
	ch := &store.Changes{}
	p, err := s.probe(ctx)
	if err != nil {
		return nil, cur, err
	}
	if p.schema != c.schema {
		// A table or column was added (or the store replaced): learn the
		// schema again, and probe again with what it now has.
		if err := s.refreshSchema(ctx, p.schema); err != nil {
			return nil, cur, mapDriverErr(s.path, err)
		}
		if p, err = s.probe(ctx); err != nil {
			return nil, cur, err
		}
	}
	tops := p.tops
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
	next.schema = p.schema
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
	// Leases and open tool attempts before runs: they decide what a run row
	// is told with (its summary, its recovery), and which runs are touched.
	touched := map[int64]bool{}
	if p.leaseSig != next.leaseSig {
		leases, err := s.leases(ctx)
		if err != nil {
			return nil, cur, err
		}
		for id := range leaseDiff(next.leases, leases) {
			touched[id] = true
		}
		next.leaseSig, next.leases, ch.Leases, ch.LeasesChanged = p.leaseSig, leases, leases, true
	}
	if p.attemptSig != next.attemptSig {
		att, err := s.openAttempts(ctx, s.read)
		if err != nil {
			return nil, cur, mapDriverErr(s.path, err)
		}
		for id := range attemptDiff(next.attempts, att) {
			touched[id] = true
		}
		next.attemptSig, next.attempts = p.attemptSig, att
	}
	if err := s.changedRuns(ctx, next, ch, grew("runs"), touched); err != nil {
		return nil, cur, err
	}
	if err := s.lifeChanges(ctx, next, ch, touched); err != nil {
		return nil, cur, err
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

// leaseDiff is the runs whose lease appeared, went, or changed hands.
func leaseDiff(old, now map[string]store.Lease) map[int64]bool {
	out := map[int64]bool{}
	for id, l := range now {
		if o, ok := old[id]; !ok || o.Owner != l.Owner || o.Generation != l.Generation {
			out[runNum(id)] = true
		}
	}
	for id := range old {
		if _, ok := now[id]; !ok {
			out[runNum(id)] = true
		}
	}
	return out
}

// attemptDiff is the runs whose open tool attempt appeared, went or changed.
func attemptDiff(old, now map[int64]*store.Recovery) map[int64]bool {
	out := map[int64]bool{}
	for id, a := range now {
		if o, ok := old[id]; !ok || o.AttemptID != a.AttemptID {
			out[id] = true
		}
	}
	for id := range old {
		if _, ok := now[id]; !ok {
			out[id] = true
		}
	}
	return out
}

// probed is what one probe read: each tailed table's top id, signatures
// of the small tables rewritten in place, and the schema's version.
type probed struct {
	tops                 map[string]int64
	leaseSig, attemptSig string
	schema               int64
}

// probe reads, in one statement, the highest row id of every tailed table,
// signatures of the lease table and of the open tool attempts (served by
// io-harness's partial index tool_attempts_open), and PRAGMA schema_version:
// most refreshes then skip the tables that did not grow.
func (s *Store) probe(ctx context.Context) (probed, error) {
	var tables []string
	for _, t := range cursorTables {
		if s.si().has(t) {
			tables = append(tables, t)
		}
	}
	lease, attempts := "''", "''"
	if s.si().has("run_leases") {
		lease = "(SELECT COALESCE(group_concat(run_id || '/' || owner || '/' || generation || '/' || renewed_at || '/' || ttl_secs, ';'), '') FROM run_leases)"
	}
	if s.si().has("tool_attempts") {
		attempts = "(SELECT COALESCE(group_concat(id || '/' || run_id, ';'), '') FROM tool_attempts WHERE completed_at IS NULL)"
	}
	sig := "(SELECT schema_version FROM pragma_schema_version) || char(31) || " + lease + " || char(31) || " + attempts
	tops, joined, err := sqlitex.Tops(ctx, &s.stmts, s.read, "id", tables, sig)
	if err != nil {
		return probed{}, mapDriverErr(s.path, err)
	}
	parts := strings.SplitN(joined, "\x1f", 3)
	p := probed{tops: tops}
	if len(parts) == 3 {
		p.schema, _ = strconv.ParseInt(parts[0], 10, 64)
		p.leaseSig, p.attemptSig = parts[1], parts[2]
	}
	return p, nil
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
	xs, err := s.readStepRows(ctx, q, []any{c.marks["steps"]})
	if err != nil {
		return err
	}
	if len(xs) > 0 {
		c.marks["steps"] = xs[len(xs)-1].row.RowID
	}
	rows, err := s.bigHeads(ctx, xs)
	ch.Steps = append(ch.Steps, rows...)
	ch.More = ch.More || len(xs) == sqlitex.ChangesPage
	return err
}

func (s *Store) newContext(ctx context.Context, c *SQLCursor, ch *store.Changes, grew bool) error {
	if !s.si().has("context_events") {
		return nil
	}
	// Provider counts that arrived for turns we saw without one.
	if c.unreported.Len() > 0 {
		var big []sampleRow
		err := s.eachRow(ctx, fmt.Sprintf(`SELECT id, run_id, step, est_tokens, reported_tokens, %s FROM context_events
			WHERE id IN (%s) AND reported_tokens IS NOT NULL`, eventDetail, sqlitex.IDList(slices.Sorted(c.unreported.Keys()))), nil, func(r *sql.Rows) error {
			x, err := scanSample(r)
			if err != nil {
				return err
			}
			c.unreported.Delete(x.c.RowID)
			if x.detail.big(timelineSQLBytes) {
				big = append(big, x)
				return nil
			}
			ch.Context = append(ch.Context, x.c)
			return nil
		})
		if err != nil {
			return err
		}
		for _, x := range big {
			if x.c.Detail, x.c.DetailBytes, err = s.detailHead(ctx, x.c.RowID, x.detail); err != nil {
				return err
			}
			ch.Context = append(ch.Context, x.c)
		}
	}
	if !grew {
		return nil
	}
	n := 0
	type later struct {
		i int // in ch.Context
		c cappedText
	}
	var big []later // samples whose detail is read from the store, after the rows
	// Only 'assembled' rows carry their detail (eventDetail) out of SQL:
	// the others are counted past.
	detail := fmt.Sprintf("CASE WHEN kind = '%[1]s' AND octet_length(detail) <= %[2]d THEN substr(detail, 1, %[3]d) END, "+
		"CASE WHEN kind = '%[1]s' THEN octet_length(detail) END", ContextAssembled, timelineSQLBytes, store.MaxEventDetailBytes)
	q := fmt.Sprintf("SELECT id, run_id, step, est_tokens, reported_tokens, %s, kind FROM context_events WHERE id > ? ORDER BY id LIMIT %d", detail, sqlitex.ChangesPage)
	xs, err := s.readNewSamples(ctx, q, []any{c.marks["context_events"]})
	if err != nil {
		return err
	}
	for _, y := range xs {
		x := y.sampleRow
		cs, run := x.c, x.run
		n++
		c.marks["context_events"] = cs.RowID
		if !y.assembled {
			continue
		}
		cs.RunID, cs.Estimated, cs.NoEstimate, cs.Reported = idStr(run), y.est.Int64, !y.est.Valid, nullInt(y.rep)
		if x.detail.big(timelineSQLBytes) {
			big = append(big, later{len(ch.Context), x.detail})
		} else {
			var err error
			if cs.Detail, cs.DetailBytes, err = cutDetail(x.detail); err != nil {
				return err
			}
		}
		// A newer turn makes the run's older unreported turn final: its
		// count is missing for good.
		dropUnreported(c, run)
		if cs.Reported == nil {
			c.unreported.Set(cs.RowID, run)
		}
		ch.Context = append(ch.Context, cs)
	}
	for _, l := range big {
		cs := &ch.Context[l.i]
		if cs.Detail, cs.DetailBytes, err = s.detailHead(ctx, cs.RowID, l.c); err != nil {
			return err
		}
	}
	ch.More = ch.More || n == sqlitex.ChangesPage
	return nil
}

func (s *Store) newAgentEvents(ctx context.Context, c *SQLCursor, ch *store.Changes) error {
	if !s.si().has("agent_events") {
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
	q := fmt.Sprintf("SELECT %s FROM provider_calls WHERE id > ? ORDER BY id LIMIT %d", s.providerCallCols(), sqlitex.ChangesPage)
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
		if !s.si().has(table) {
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
			fresh = append(fresh, r)
		}
		ch.More = ch.More || len(reqs) == sqlitex.ChangesPage
	}
	if err := s.annotate(ctx, s.read, true, fresh); err != nil {
		return mapDriverErr(s.path, err)
	}
	for _, r := range fresh {
		if !r.Resolved {
			c.pending.Set(r.Key(), standingSig(r))
		}
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

// requestCols are the columns scanRequest reads, for each kind.
func requestCols(kind store.RequestKind) string {
	switch kind {
	case store.Approval:
		// The content's length without loading it; the content itself only
		// when SQL may load it (contentHeads reads a longer one's head).
		return fmt.Sprintf("id, run_id, step, act, target, CASE WHEN octet_length(content) <= %d THEN substr(content, 1, %d) END, octet_length(content), resolved",
			timelineSQLBytes, store.MaxContentBytes)
	case store.Question:
		return "id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at"
	}
	return "id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at"
}

// requestsWhere reads requests of one kind; the WHERE tail holds integers
// only, and parameters for the rest.
func (s *Store) requestsWhere(ctx context.Context, kind store.RequestKind, tail string, args ...any) ([]store.Request, error) {
	var out []store.Request
	err := s.eachRow(ctx, "SELECT "+requestCols(kind)+" FROM "+requestTables[kind]+" WHERE "+tail, args, func(r *sql.Rows) error {
		req, err := scanRequest(kind, r)
		out = append(out, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, s.contentHeads(ctx, out)
}

// changedRuns reports open runs whose row changed, runs touched by a lease
// or a tool attempt (their readings changed with it), and new runs.
func (s *Store) changedRuns(ctx context.Context, c *SQLCursor, ch *store.Changes, grew bool, touched map[int64]bool) error {
	// Open runs first, then new ones: a run that starts and finishes between
	// two calls is reported once, as it is now.
	changed := map[int64]string{}
	var look []int64
	for id := range c.open.Keys() {
		look = append(look, id)
	}
	for id := range touched {
		if !c.open.Has(id) && id <= c.marks["runs"] {
			look = append(look, id)
		}
	}
	if len(look) > 0 {
		// A light look first; whole rows only for those that changed.
		slices.Sort(look)
		// Past manyIDs ids (100 k open runs), every run up to the mark is
		// read instead: parsing the literals cost more than the rows. The
		// runs that are neither open nor touched are passed over as they
		// are read, before any signature is made of them.
		where, args, keep := "WHERE r.id IN ("+sqlitex.IDList(look)+")", []any(nil), (func(int64) bool)(nil)
		if len(look) > manyIDs {
			where, args = "WHERE r.id <= ?", []any{c.marks["runs"]}
			keep = func(id int64) bool {
				_, ok := slices.BinarySearch(look, id)
				return ok
			}
		}
		sigs, err := s.runSigs(ctx, keep, where, args...)
		if err != nil {
			return err
		}
		for id, sig := range sigs {
			if was, ok := c.open.Get(id); (ok && sig != was) || touched[id] {
				changed[id] = sig
			}
		}
	}
	if len(changed) > 0 {
		runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+sqlitex.IDList(slices.Sorted(maps.Keys(changed)))+")"))
		if err != nil {
			return err
		}
		if err := s.dress(ctx, runs, c.leases); err != nil {
			return err
		}
		for _, r := range runs {
			id := runNum(r.ID)
			_, wasOpen := c.open.Get(id)
			if !wasOpen && !r.Resumable && lifeSig(r) == c.lifeOf(id) {
				continue // a lease or attempt that changes nothing about this run
			}
			ch.Runs = append(ch.Runs, r)
			c.setLife(id, lifeSig(r))
			if !isOpen(r) {
				c.open.Delete(id)
				dropUnreported(c, id)
			} else {
				c.open.Set(id, changed[id])
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
	if err := s.dress(ctx, runs, c.leases); err != nil {
		return err
	}
	sort.Slice(runs, func(i, j int) bool { return runNum(runs[i].ID) < runNum(runs[j].ID) })
	var born []int64
	for _, r := range runs {
		id := runNum(r.ID)
		c.marks["runs"] = id
		if isOpen(r) {
			born = append(born, id)
		}
		c.setLife(id, lifeSig(r))
		ch.Runs = append(ch.Runs, r)
	}
	if len(born) > 0 {
		sigs, err := s.runSigs(ctx, nil, "WHERE r.id IN ("+sqlitex.IDList(born)+")")
		if err != nil {
			return err
		}
		for id, sig := range sigs {
			c.open.Set(id, sig)
		}
	}
	return nil
}

func (c *SQLCursor) lifeOf(id int64) string {
	v, _ := c.life.Get(id)
	return v
}

func (c *SQLCursor) setLife(id int64, sig string) {
	if sig == "" {
		c.life.Delete(id)
		return
	}
	c.life.Set(id, sig)
}

// lifeChanges re-tells what changed about runs and requests without their
// rows changing: a request becomes an orphan when its run asks again or
// commits past it, or parked when its run parks on it; a parked run becomes
// driven by a leaseless resume when that resume's rows arrive. Only runs
// this refresh touched (new steps, requests or rows, a lease or an attempt)
// are looked at again.
func (s *Store) lifeChanges(ctx context.Context, c *SQLCursor, ch *store.Changes, touched map[int64]bool) error {
	for _, r := range ch.Steps {
		touched[runNum(r.RunID)] = true
	}
	for _, r := range ch.Requests {
		touched[runNum(r.RunID)] = true
	}
	for _, r := range ch.Runs {
		touched[runNum(r.ID)] = true
	}
	if len(touched) == 0 {
		return nil
	}
	// Requests still undecided whose run was touched: their standing again.
	told := map[store.RequestKey]bool{}
	for _, r := range ch.Requests {
		told[r.Key()] = true
	}
	byKind := map[store.RequestKind][]int64{}
	for k := range c.pending.Keys() {
		if !told[k] {
			byKind[k.Kind] = append(byKind[k.Kind], runNum(k.ID))
		}
	}
	var again []store.Request
	for kind, ids := range byKind {
		slices.Sort(ids)
		reqs, err := s.requestsWhere(ctx, kind, fmt.Sprintf("id IN (%s) AND run_id IN (%s)", sqlitex.IDList(ids),
			sqlitex.IDList(slices.Sorted(maps.Keys(touched)))))
		if err != nil {
			return err
		}
		for _, r := range reqs {
			if !r.Resolved {
				again = append(again, r)
			}
		}
	}
	if len(again) > 0 {
		if err := s.annotate(ctx, s.read, true, again); err != nil {
			return mapDriverErr(s.path, err)
		}
		var moved []store.Request
		for _, r := range again {
			if was, _ := c.pending.Get(r.Key()); was != standingSig(r) {
				c.pending.Set(r.Key(), standingSig(r))
				moved = append(moved, r)
			}
		}
		if err := s.fillApprovalTimes(ctx, moved); err != nil {
			return err
		}
		if err := s.fillAncestry(ctx, moved); err != nil {
			return err
		}
		ch.Requests = append(ch.Requests, moved...)
	}
	// Parked runs touched: is a leaseless resume driving them now?
	sent := map[int64]bool{}
	for _, r := range ch.Runs {
		sent[runNum(r.ID)] = true
	}
	var parked []int64
	for id := range touched {
		if sig, ok := c.open.Get(id); ok && !sent[id] && parkedSig(sig) {
			parked = append(parked, id)
		}
	}
	if len(parked) == 0 {
		return nil
	}
	slices.Sort(parked)
	flags, err := s.leaseless(ctx, s.read, true, parked)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	var flip []int64
	for _, id := range parked {
		was := c.lifeOf(id)
		wasFlag := strings.HasPrefix(was, "true|")
		if flags[id] != wasFlag {
			flip = append(flip, id)
		}
	}
	if len(flip) == 0 {
		return nil
	}
	runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+sqlitex.IDList(flip)+")"))
	if err != nil {
		return err
	}
	if err := s.dress(ctx, runs, c.leases); err != nil {
		return err
	}
	for _, r := range runs {
		c.setLife(runNum(r.ID), lifeSig(r))
		ch.Runs = append(ch.Runs, r)
	}
	return nil
}

// parkedSig reports a run signature (status|outcome|…) of a parked run.
func parkedSig(sig string) bool {
	status, rest, _ := strings.Cut(sig, "|")
	outcome, _, _ := strings.Cut(rest, "|")
	return status == string(store.StatusPaused) || outcome == string(store.OutcomeAwaitingAnswer)
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
