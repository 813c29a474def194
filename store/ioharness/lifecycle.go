package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// A run's life after its first one, read from io-harness's own records.
//
// io-harness drives a run again in ways its status column does not show:
//
//   - resume (src/run.rs) re-drives a completed run whose outcome
//     terminal_outcome (src/run/outcome.rs) does not treat as final — a step,
//     time or cost limit — under a lease, with the status left completed and
//     the earlier run_outcomes row in place until it finishes again;
//   - resume_with_decision resolves the deferred request, records
//     decision/<v>/resumed:<id>, and drives the run on from the next step
//     with no lease at all, its status still paused;
//   - a crash while parked leaves the row a driver polled unresolved, and a
//     crash resume replays the step that asked and writes a new row
//     (tests/attach.rs, F7), so the old row is read by nobody;
//   - a driver that dies in the middle of a tool call it cannot replay
//     leaves an open tool_attempts row, and every resume stops until a
//     person decides it (resume_with_recovery).
//
// This file reads those records: Resumable, LeaselessDriver and Recovery on
// a run, Standing on a request. Classify combines them with liveness.

// finalOutcomes are the outcomes terminal_outcome (src/run/outcome.rs) maps
// to a final RunOutcome: a resume of a completed run with one of them reports
// it and drives nothing. Every other outcome of a completed run — the
// limits, awaiting_answer, anything it does not know — is resumed.
var finalOutcomes = map[store.Outcome]bool{
	store.OutcomeSuccess: true, store.OutcomeDenied: true, store.OutcomeBudgetCeilingReached: true,
	store.OutcomeStalled: true, "escalated_retryable": true, "escalated_terminal": true, "escalated": true,
	"refused": true, store.OutcomeCancelled: true, store.OutcomeFinished: true, store.OutcomePlanRejected: true,
}

// resumable reports a completed run that io-harness's resume would drive
// again (finished_outcome: status completed, then terminal_outcome).
func resumable(status store.Status, outcome store.Outcome) bool {
	return status == store.StatusCompleted && !finalOutcomes[outcome]
}

// reopen drops the summary of a run a resume drives again: it is of the
// earlier ending, and the run's counts are its steps' (RunStats).
func reopen(r *store.Run) {
	if r.Reopened() && r.Summary != nil {
		r.Summary = nil
		r.Steps, r.Tokens, r.Unreported, r.StatsKnown = 0, 0, 0, false
	}
}

// runLife is what a run's steps and policy events say about where it is.
type runLife struct {
	committed int // highest step of a committed steps row (not a retry, escalation or compaction); 0 with none
	last      int // highest step of any steps row
	defers    map[deferKey]bool
	resumed   []resumedDecision
}

type deferKey struct {
	step        int
	act, target string
}

// resumedDecision is a decision/<verdict>/resumed:<request> policy event:
// resume_with_decision resolved that request and recorded it.
type resumedDecision struct {
	step    int
	request int64
	verdict store.PolicyVerdict
}

// lives reads the steps of runs (and, with policy, their defer and resumed
// decisions). q is what to read through; bounded says the learned row
// bounds (rows.go) may be used, which needs the read connection (false
// inside a write transaction on a writer's one connection).
func (s *Store) lives(ctx context.Context, q queryer, bounded, policy bool, runs []int64) (map[int64]*runLife, error) {
	out := make(map[int64]*runLife, len(runs))
	for _, r := range runs {
		out[r] = &runLife{defers: map[deferKey]bool{}}
	}
	if len(runs) == 0 {
		return out, nil
	}
	if err := s.lastSteps(ctx, q, bounded, runs, out); err != nil {
		return nil, err
	}
	if !policy {
		return out, nil
	}
	decided, err := s.resumedDecisions(ctx, q, bounded, runs)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		out[r].defers, out[r].resumed = decided[r].defers, decided[r].resumed
	}
	return out, nil
}

// resumedDecisions reads runs' defer decisions and decision/<v>/resumed:<id>
// events, every one of them (rows.go).
func (s *Store) resumedDecisions(ctx context.Context, q queryer, bounded bool, runs []int64) (map[int64]*runLife, error) {
	out := make(map[int64]*runLife, len(runs))
	for _, r := range runs {
		out[r] = &runLife{defers: map[deferKey]bool{}}
	}
	if len(runs) == 0 || !s.si().has("policy_events") {
		return out, nil
	}
	type ev struct {
		run, step        int64
		act, target, dec string
		source           string
	}
	where := "kind = 'decision' AND (decision = 'defer' OR source LIKE 'resumed:%')"
	read := func(r *sql.Rows) (ev, error) {
		var e ev
		var id int64
		var dec, src sql.NullString
		err := r.Scan(&id, &e.run, &e.step, &e.act, &e.target, &dec, &src)
		e.dec, e.source = dec.String, src.String
		return e, err
	}
	var evs []ev
	var err error
	if bounded {
		evs, err = readRuns(ctx, s, runSpec{table: "policy_events", cols: "act, target, decision, source", where: where, runs: runs}, read)
	} else {
		err = s.eachRowQ(ctx, q, fmt.Sprintf("SELECT id, run_id, step, act, target, decision, source FROM policy_events WHERE run_id IN (%s) AND %s",
			sqlitex.IDList(runs), where), func(r *sql.Rows) error {
			e, err := read(r)
			evs = append(evs, e)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		life := out[e.run]
		if life == nil {
			continue
		}
		if e.dec == string(store.PolicyDefer) {
			life.defers[deferKey{int(e.step), e.act, e.target}] = true
		}
		if id, ok := strings.CutPrefix(e.source, "resumed:"); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				life.resumed = append(life.resumed, resumedDecision{step: int(e.step), request: n, verdict: store.PolicyVerdict(e.dec)})
			}
		}
	}
	return out, nil
}

// lastSteps finds each run's highest committed step and highest step of any
// row. io-harness writes a run's steps rows in step order — every resume
// continues from last_step + 1 or replays the one uncommitted step — so the
// run's newest row carries its highest step, and the newest committed row
// its highest committed one: the scan reads backwards from the table's end
// and stops at each run's newest committed row. A run with none in the last
// few chunks is looked up through its learned row bounds instead (bounded),
// or by reading on to the start.
func (s *Store) lastSteps(ctx context.Context, q queryer, bounded bool, runs []int64, into map[int64]*runLife) error {
	pending := map[int64]bool{}
	for _, r := range runs {
		pending[r] = true
	}
	seen := map[int64]bool{}
	var visitRow func(run int64, step int, decision string) error
	visit := func(r *sql.Rows) error {
		var id, run int64
		var step int
		var decision string
		if err := r.Scan(&id, &run, &step, &decision); err != nil {
			return err
		}
		return visitRow(run, step, decision)
	}
	visitRow = func(run int64, step int, decision string) error {
		if !pending[run] {
			return nil
		}
		life := into[run]
		if !seen[run] {
			seen[run], life.last = true, step
		}
		if stepKind(decision) == store.StepTurn {
			life.committed = step
			delete(pending, run)
			if len(pending) == 0 {
				return errAllFound // the rows below cannot matter: stop reading them
			}
		}
		return nil
	}
	back := func(lo, hi int64, ids []int64) error {
		return allFound(s.eachRowQ(ctx, q, fmt.Sprintf("SELECT id, run_id, step, substr(decision, 1, 64) FROM steps WHERE id > ? AND id <= ? AND run_id IN (%s) ORDER BY id DESC",
			sqlitex.IDList(ids)), visit, lo, hi))
	}
	// The newest chunk first, in one read with the table's end; most runs
	// asked for are there.
	var top int64
	// The table's end as scalar subqueries, not a joined derived table:
	// SQLite 3.54 plans the join as a scan of every step with the end
	// inside the loop (a second of a 1 M-step store, not 5 ms).
	err := s.eachRowQ(ctx, q, fmt.Sprintf(`SELECT s.id, s.run_id, s.step, substr(s.decision, 1, 64),
		(SELECT COALESCE(MAX(id), 0) FROM steps) FROM steps s
		WHERE s.id > (SELECT COALESCE(MAX(id), 0) FROM steps) - %d AND s.run_id IN (%s) ORDER BY s.id DESC`,
		scanChunk, sqlitex.IDList(runs)), func(r *sql.Rows) error {
		var id, run int64
		var step int
		var decision string
		if err := r.Scan(&id, &run, &step, &decision, &top); err != nil {
			return err
		}
		return visitRow(run, step, decision)
	})
	if err = allFound(err); err != nil || len(pending) == 0 {
		return err
	}
	if top == 0 {
		if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM steps").Scan(&top); err != nil {
			return err
		}
	}
	hi := top - scanChunk
	for n := 1; hi > 0 && len(pending) > 0; n++ {
		if bounded && n == 4 {
			break
		}
		if err := back(hi-scanChunk, hi, slices.Sorted(mapKeys(pending))); err != nil {
			return err
		}
		hi -= scanChunk
	}
	if hi <= 0 || len(pending) == 0 {
		return nil
	}
	for _, run := range slices.Sorted(mapKeys(pending)) {
		ranges, err := s.runRanges(ctx, "steps", []int64{run})
		if err != nil {
			return err
		}
		for i := len(ranges) - 1; i >= 0 && pending[run]; i-- {
			r := ranges[i]
			for h := min(r.last, hi); h >= r.first && pending[run]; h -= scanChunk {
				if err := back(max(h-scanChunk, r.first-1), h, []int64{run}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// errAllFound ends a backward read of steps once every run asked about
// is known: a live run with a request is read on each of its commits, and
// reading the whole newest chunk of its rows each time (8192 rows) was
// most of a refresh while it streamed steps.
var errAllFound = errors.New("every run found")

func allFound(err error) error {
	if errors.Is(err, errAllFound) {
		return nil
	}
	return err
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// eachRowQ runs a read through q and hands each row to fn: through the
// prepared-statement cache when q is the read connection.
func (s *Store) eachRowQ(ctx context.Context, q queryer, query string, fn func(*sql.Rows) error, args ...any) error {
	if db, ok := q.(*sql.DB); ok && db == s.read {
		return s.stmts.EachRow(ctx, s.read, query, args, fn)
	}
	if _, ok := q.(preparedReads); ok {
		return s.stmts.EachRow(ctx, s.read, query, args, fn)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// standings sets where each undecided request of one run stands. reqs are
// all of that run's requests, decided ones too: which one is newest matters.
//
//   - A request a newer one follows is orphaned: a driver polls one request
//     at a time and asks the next only once it has its answer, and a crash
//     resume replays the step that asked and writes a new row
//     (tests/attach.rs F7) — so once the run has asked anything newer,
//     nothing polls the older row. Newer means a later step, or the same
//     step and kind with a higher id. (Two kinds at one step cannot be told
//     apart by the store: neither orphans the other.)
//   - The request the run parked on is parked: the run is paused (or, for a
//     question, completed awaiting_answer; for a plan, paused
//     awaiting_plan) and its last row is the committed step that asked. The
//     flat loop commits the asking step and then finishes awaiting_*
//     (src/run/step.rs); a step-0 net request parks before any step.
//   - Any other request whose step the run has since committed, or passed,
//     is orphaned: the gate polls before the asking step commits, so a
//     committed asking step means its driver stopped polling. (Step 0, the
//     provider's net check, is asked again on every resume at step 0 and is
//     judged by newer requests only.)
//   - The rest are open: a live driver polls them.
func standings(run store.Run, life *runLife, reqs []*store.Request) {
	for _, r := range reqs {
		r.Standing, r.StandingReason = store.StandingOpen, ""
		if r.Resolved {
			continue
		}
		var newer *store.Request
		for _, o := range reqs {
			if o.Step > r.Step || o.Step == r.Step && o.Kind == r.Kind && runNum(o.ID) > runNum(r.ID) {
				if newer == nil || o.Step > newer.Step {
					newer = o
				}
			}
		}
		switch {
		case newer != nil:
			r.Standing = store.StandingOrphaned
			r.StandingReason = fmt.Sprintf("run %s asked again in %s:%s (step %d) after asking this at step %d: a resume after a crash replays the step that asked and writes a new request, so nothing polls this one",
				run.ID, newer.Kind, newer.ID, newer.Step, r.Step)
			if newer.Step > r.Step || newer.Resolved {
				r.StandingReason = fmt.Sprintf("run %s has asked %s:%s (step %d) since it asked this at step %d: a driver polls one request at a time, so nothing polls this one",
					run.ID, newer.Kind, newer.ID, newer.Step, r.Step)
			}
		case parkedOn(run, life, r):
			r.Standing = store.StandingParked
			r.StandingReason = fmt.Sprintf("run %s is paused (%s) on it", run.ID, orDash(string(run.Outcome)))
		case r.Step > 0 && (r.Step <= life.committed || r.Step < life.last):
			r.Standing = store.StandingOrphaned
			r.StandingReason = fmt.Sprintf("run %s has gone past step %d, where it asked this (it has rows up to step %d): its driver polls a request only until the asking step commits, so nothing polls this one",
				run.ID, r.Step, life.last)
		}
	}
}

// parkedOn reports the request a run stopped on.
func parkedOn(run store.Run, life *runLife, r *store.Request) bool {
	if !run.Parked() || life.last != life.committed || r.Step != life.committed {
		return false
	}
	switch r.Kind {
	case store.Approval:
		return run.Outcome == store.OutcomeAwaitingApproval
	case store.Question:
		return run.Outcome == store.OutcomeAwaitingAnswer
	case store.Plan:
		return run.Outcome == store.OutcomeAwaitingPlan
	}
	return false
}

// leaselessDriver reports a parked run that resume_with_decision drives
// again: it resolved a deferred request and recorded resumed:<id> (with
// approve: a denial ends the run), and the run did something after the
// deferred step — a row of a later step, or a new request asked with no
// defer recorded for it — and has not parked again since. reqs are the
// run's requests with their standings; resolved says whether an approval is
// resolved.
func leaselessDriver(run store.Run, life *runLife, reqs []*store.Request, resolved func(int64) bool) bool {
	if !run.Parked() {
		return false
	}
	for _, r := range reqs {
		if !r.Resolved && r.Standing == store.StandingParked {
			return false
		}
	}
	from := -1
	for _, d := range life.resumed {
		if d.verdict == store.PolicyApprove && d.step > from && resolved(d.request) {
			from = d.step
		}
	}
	if from < 0 {
		return false
	}
	if life.last > from {
		return true
	}
	for _, r := range reqs {
		if !r.Resolved && r.Standing == store.StandingOpen && r.Step > from && !(r.Kind == store.Approval && life.defers[deferKey{r.Step, r.Act, r.Target}]) {
			return true
		}
	}
	return false
}

// annotate sets Standing on the undecided requests in reqs, reading their
// runs' records through q.
func (s *Store) annotate(ctx context.Context, q queryer, bounded bool, reqs []store.Request) error {
	return s.annotateWith(ctx, q, bounded, reqs, nil)
}

// annotateWith is annotate with the runs' status and outcome already read
// (known; nil to read them).
func (s *Store) annotateWith(ctx context.Context, q queryer, bounded bool, reqs []store.Request, known map[int64]store.Run) error {
	byRun := map[int64][]*store.Request{}
	for i := range reqs {
		if !reqs[i].Resolved {
			byRun[runNum(reqs[i].RunID)] = append(byRun[runNum(reqs[i].RunID)], &reqs[i])
		}
	}
	if len(byRun) == 0 {
		return nil
	}
	ids := slices.Sorted(mapKeys(byRun))
	// Standings are a run's own: every request of the run counts, not just
	// those asked for.
	all, err := s.requestsOf(ctx, q, ids)
	if err != nil {
		return err
	}
	runs := known
	if runs == nil {
		if runs, err = s.runRows(ctx, q, ids); err != nil {
			return err
		}
	}
	lives, err := s.lives(ctx, q, bounded, false, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		run, ok := runs[id]
		if !ok {
			continue
		}
		rs := all[id]
		standings(run, lives[id], rs)
		got := map[store.RequestKey]*store.Request{}
		for _, r := range rs {
			got[r.Key()] = r
		}
		for _, r := range byRun[id] {
			if g, ok := got[r.Key()]; ok {
				r.Standing, r.StandingReason = g.Standing, g.StandingReason
			}
		}
	}
	return nil
}

// requestsOf reads every request of runs, decided or not, by run: what
// standings compare (kind, id, step, whether decided, an approval's act and
// target), in one read of the three small request tables.
func (s *Store) requestsOf(ctx context.Context, q queryer, runs []int64) (map[int64][]*store.Request, error) {
	out := map[int64][]*store.Request{}
	list := sqlitex.IDList(runs)
	var parts []string
	for _, kind := range []store.RequestKind{store.Approval, store.Question, store.Plan} {
		table := requestTables[kind]
		if !s.si().has(table) {
			continue
		}
		decided, act, target := "resolved != 0", "NULL", "NULL"
		if kind == store.Approval {
			decided, act, target = "resolved IS NOT NULL", "act", "target"
		}
		parts = append(parts, fmt.Sprintf("SELECT %d, id, run_id, step, %s, %s, %s FROM %s WHERE run_id IN (%s)",
			int(kind), act, target, decided, table, list))
	}
	if len(parts) == 0 {
		return out, nil
	}
	err := s.eachRowQ(ctx, q, strings.Join(parts, " UNION ALL ")+" ORDER BY 1, 2", func(r *sql.Rows) error {
		var kind int
		var id, run int64
		var act, target sql.NullString
		req := &store.Request{}
		if err := r.Scan(&kind, &id, &run, &req.Step, &act, &target, &req.Resolved); err != nil {
			return err
		}
		req.Kind, req.ID, req.RunID, req.Act, req.Target = store.RequestKind(kind), idStr(id), idStr(run), act.String, target.String
		out[run] = append(out[run], req)
		return nil
	})
	return out, err
}

// runRows reads runs' status and outcome (what standings need) through q.
func (s *Store) runRows(ctx context.Context, q queryer, ids []int64) (map[int64]store.Run, error) {
	out := map[int64]store.Run{}
	err := s.eachRowQ(ctx, q, fmt.Sprintf("SELECT id, %s, outcome FROM runs WHERE id IN (%s)",
		s.si().col("runs", "status", "CASE WHEN outcome IS NULL THEN 'running' ELSE 'completed' END"), sqlitex.IDList(ids)),
		func(r *sql.Rows) error {
			var id int64
			var status, outcome sql.NullString
			if err := r.Scan(&id, &status, &outcome); err != nil {
				return err
			}
			out[id] = store.Run{ID: idStr(id), Status: store.Status(status.String), Outcome: store.Outcome(outcome.String)}
			return nil
		})
	return out, err
}

// openAttempts reads the tool calls a driver started and never finished:
// the oldest open attempt of each run, the one recovery_pause reports.
func (s *Store) openAttempts(ctx context.Context, q queryer) (map[int64]*store.Recovery, error) {
	out := map[int64]*store.Recovery{}
	if !s.si().has("tool_attempts") {
		return out, nil
	}
	err := s.eachRowQ(ctx, q, "SELECT id, run_id, step, tool, started_at FROM tool_attempts WHERE completed_at IS NULL ORDER BY id",
		func(r *sql.Rows) error {
			var id, run int64
			var step int
			var tool string
			var started sql.NullString
			if err := r.Scan(&id, &run, &step, &tool, &started); err != nil {
				return err
			}
			if out[run] == nil {
				out[run] = &store.Recovery{AttemptID: idStr(id), Step: step, Tool: tool, StartedAt: nullTime(started)}
			}
			return nil
		})
	return out, err
}

// dress adds to runs what their rows alone do not say: each run's own
// lease, its open tool attempt, whether a resume has reopened it (dropping
// the earlier summary), and whether a leaseless resume drives it.
func (s *Store) dress(ctx context.Context, runs []store.Run, leases map[string]store.Lease) error {
	att, err := s.openAttempts(ctx, s.read)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	var parked []int64
	for i := range runs {
		r := &runs[i]
		if l, ok := leases[r.ID]; ok {
			held := l // a copy of its own only for a run with a lease: &l made one for every run
			r.Lease = &held
		}
		r.Recovery = att[runNum(r.ID)]
		reopen(r)
		if r.Parked() {
			parked = append(parked, runNum(r.ID))
		}
	}
	if len(parked) == 0 {
		return nil
	}
	flags, err := s.leaseless(ctx, s.read, true, parked)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	for i := range runs {
		runs[i].LeaselessDriver = flags[runNum(runs[i].ID)]
	}
	return nil
}

// leaseless reads which of these parked runs a leaseless resume drives.
// The policy events come first: a run with no resumed:<id> decision is not
// one, and needs nothing else read.
func (s *Store) leaseless(ctx context.Context, q queryer, bounded bool, parked []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	decided, err := s.resumedDecisions(ctx, q, bounded, parked)
	if err != nil {
		return nil, err
	}
	var cand []int64
	for _, id := range parked {
		if len(decided[id].resumed) > 0 {
			cand = append(cand, id)
		}
	}
	if len(cand) == 0 {
		return out, nil
	}
	runs, err := s.runRows(ctx, q, cand)
	if err != nil {
		return nil, err
	}
	lives, err := s.lives(ctx, q, bounded, false, cand)
	if err != nil {
		return nil, err
	}
	reqs, err := s.requestsOf(ctx, q, cand)
	if err != nil {
		return nil, err
	}
	for _, id := range cand {
		run, ok := runs[id]
		if !ok {
			continue
		}
		life := lives[id]
		life.defers, life.resumed = decided[id].defers, decided[id].resumed
		standings(run, life, reqs[id])
		out[id] = leaselessDriver(run, life, reqs[id], func(req int64) bool {
			var resolved sql.NullString
			err := q.QueryRowContext(ctx, "SELECT resolved FROM pending_approvals WHERE id = ?", req).Scan(&resolved)
			return err == nil && resolved.Valid
		})
	}
	return out, nil
}

// classify is io-harness's delivery rule for an undecided request: its
// standing first (an orphan is read by nobody, a parked request only by its
// host's resume), then the run's end, then who drives it.
func classify(req store.Request, r store.Run, lease *store.Lease, recordsLeases bool, now time.Time) (store.Delivery, string) {
	switch req.Standing {
	case store.StandingOrphaned:
		return store.Orphaned, req.StandingReason
	case store.StandingParked:
		return store.Deferred, deferredReason(r)
	}
	return ClassifyDelivery(r, lease, recordsLeases, now)
}

func deferredReason(r store.Run) string {
	return fmt.Sprintf("run %s is paused (%s): io-harness's resume refuses a request that is already decided, so decide it through the host that resumes the run",
		r.ID, orDash(string(r.Outcome)))
}
