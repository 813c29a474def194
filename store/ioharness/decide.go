package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vigil-run/vigil/store"
)

// ClassifyDelivery tells whether a decision written now reaches the run that
// asked, and if not, why, in one line, from the run and its effective lease
// (its own or its tree root's) alone. Classify first weighs the request's
// standing (lifecycle.go): an orphan or the request a run parked on is not
// for a driver to read, whatever the lease says.
func ClassifyDelivery(r store.Run, lease *store.Lease, recordsLeases bool, now time.Time) (store.Delivery, string) {
	live := store.LivenessOf(lease, recordsLeases, now)
	driven := live == store.Live || live == store.Lapsed
	switch {
	case r.Parked() && !driven && r.LeaselessDriver:
		return store.DeliveryUnknown, fmt.Sprintf("run %s was resumed with a decision (io-harness's resume_with_decision), which holds no lease: nothing in the store says whether its driver still runs; a decision reaches it only if it still polls this request",
			r.ID)
	case r.Parked() && !driven:
		return store.Deferred, deferredReason(r)
	case r.Ended() && r.Outcome != store.OutcomeAwaitingAnswer:
		return store.Closed, fmt.Sprintf("run %s has ended (%s)", r.ID, orDash(string(r.Outcome)))
	}
	switch live {
	case store.LivenessUnknown:
		return store.DeliveryUnknown, ""
	case store.Foreign:
		_, note := store.OwnerCheck(*lease)
		return store.DeliveryUnknown, note
	case store.Live:
		return store.Deliverable, ""
	case store.Lapsed:
		return store.Deliverable, "" // parked runs commit nothing, so their lease lapses while they wait
	case store.Dead:
		return store.NotLive, fmt.Sprintf("run %s's driver (pid %d) is gone: nobody would read the decision, and a resume asks again", r.ID, lease.OwnerPID())
	}
	return store.NotLive, fmt.Sprintf("run %s has no driver (no lease): nobody would read the decision, and a resume asks again", r.ID)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Delivery classifies a request as it stands now.
func (s *Store) Delivery(ctx context.Context, key store.RequestKey) (store.Delivery, string, error) {
	req, err := s.Request(ctx, key)
	if err != nil {
		return 0, "", err
	}
	run, lease, err := s.runAndLease(ctx, s.read, req.RunID)
	if err != nil {
		return 0, "", err
	}
	if err := s.dressOne(ctx, s.read, true, &run); err != nil {
		return 0, "", mapDriverErr(s.path, err)
	}
	d, why := s.Classify(req, run, lease, time.Now())
	return d, why, nil
}

// Decide writes a person's decision as a compare-and-set on the undecided
// row, inside one BEGIN IMMEDIATE transaction that first checks the run can
// still receive it. It returns Won false (with what won) when someone else
// decided first, a RefusedError when the run is paused, ended or has no
// live driver, and ErrReadOnly when the store cannot be written.
func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	update, args, err := decisionUpdate(d)
	if err != nil {
		return store.DecideResult{}, err
	}
	id, ok := parseID(d.Key.ID)
	if !ok {
		return store.DecideResult{}, storeErr(s.path, store.ErrNoSuchReq, d.Key.String(), nil)
	}
	// The request's standing and its run's readings are worked out before
	// the write lock is taken (they read the steps and policy tables),
	// together with a mark of every table they read rows of; under the lock
	// one read of those marks says whether anything was written since, and
	// only then are they worked out again. A decision then holds the lock
	// for a few short reads.
	pre, err := s.factsFor(ctx, preparedReads{s}, true, d.Key, id)
	if err != nil {
		return store.DecideResult{}, err
	}
	if pre.req.Resolved {
		// A decided request stays decided (io-harness never reopens one):
		// said without the write lock, so a decision that writes nothing
		// opens nothing beside the store (no -wal or -shm made, none
		// rewritten).
		return store.DecideResult{Decision: pre.req.Decision, DecidedBy: pre.req.DecidedBy}, nil
	}
	if beforeDecideLock != nil {
		beforeDecideLock()
	}
	var result store.DecideResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		// What the decision depends on is read from the store as it is under
		// this transaction's write lock. The read connection sees the same
		// (nobody else can commit meanwhile, and this transaction has
		// written nothing yet), through its prepared statements and learned
		// row bounds.
		q, bounded := queryer(preparedReads{s}), true
		facts := pre
		if facts != nil {
			marks, err := s.factMarks(ctx, q)
			if err != nil {
				return err
			}
			if marks != facts.marks {
				facts = nil // written since: work it out again, under the lock
			}
		}
		if facts != nil {
			status, outcome := facts.run.Status, facts.run.Outcome
			if err := facts.reread(ctx, s, q, d.Key, id); err != nil {
				return err
			}
			if facts.run.Status != status || facts.run.Outcome != outcome {
				facts = nil // the run parked or ended since: its standing may differ
			}
		}
		if facts == nil {
			var err error
			if facts, err = s.factsFor(ctx, q, bounded, d.Key, id); err != nil {
				return err
			}
		}
		req, run, lease := facts.req, facts.run, facts.lease
		if req.Resolved {
			result = store.DecideResult{Decision: req.Decision, DecidedBy: req.DecidedBy}
			return nil
		}
		if dl, why := s.Classify(req, run, lease, time.Now()); !dl.Writable() {
			return &store.RefusedError{Key: d.Key, Reason: why, Delivery: dl}
		}
		res, err := tx.ExecContext(ctx, update, append(args, id)...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		result.Won = n == 1
		return nil
	})
	return result, err
}

// beforeDecideLock, when set (tests), runs between a decision's reading of
// its facts and its taking the write lock: where another writer can land.
var beforeDecideLock func()

// decisionFacts are what a decision is judged on: the request (its
// standing read), its run (status, outcome, its own lease, whether a
// leaseless resume drives it), the run's effective lease, and the marks of
// the tables the standing and readings were read from.
type decisionFacts struct {
	req   store.Request
	run   store.Run
	lease *store.Lease
	marks factMarks
}

// factMarks are the top row ids of the tables a standing and a leaseless
// reading are read from: rows are only ever added above them (every one is
// AUTOINCREMENT), so equal marks mean no row was added since.
type factMarks struct{ steps, approvals, questions, plans, policy int64 }

func (s *Store) factMarks(ctx context.Context, q queryer) (factMarks, error) {
	top := func(t string) string {
		if !s.si().has(t) {
			return "0"
		}
		return "(SELECT COALESCE(MAX(id), 0) FROM " + t + ")"
	}
	var m factMarks
	err := q.QueryRowContext(ctx, "SELECT "+top("steps")+", "+top("pending_approvals")+", "+top("pending_questions")+", "+
		top("plans")+", "+top("policy_events")).Scan(&m.steps, &m.approvals, &m.questions, &m.plans, &m.policy)
	return m, err
}

// factsFor reads a decision's facts through q.
func (s *Store) factsFor(ctx context.Context, q queryer, bounded bool, key store.RequestKey, id int64) (*decisionFacts, error) {
	f := &decisionFacts{}
	var err error
	if f.marks, err = s.factMarks(ctx, q); err != nil {
		return nil, err
	}
	if err := f.reread(ctx, s, q, key, id); err != nil {
		return nil, err
	}
	if f.req.Resolved {
		return f, nil
	}
	reqs := []store.Request{f.req}
	if err := s.annotateWith(ctx, q, bounded, reqs, map[int64]store.Run{runNum(f.run.ID): f.run}); err != nil {
		return nil, err
	}
	f.req.Standing, f.req.StandingReason = reqs[0].Standing, reqs[0].StandingReason
	if err := s.leaselessOne(ctx, q, bounded, &f.run); err != nil {
		return nil, err
	}
	return f, nil
}

// reread reads again what rows updated in place can change — the request
// (decided since?), the run (its status and outcome) and the leases — and
// keeps the standing and leaseless reading, which only added rows (and the
// run's status and outcome, which the caller compares) change.
func (f *decisionFacts) reread(ctx context.Context, s *Store, q queryer, key store.RequestKey, id int64) error {
	req, err := requestInTx(ctx, q, key, id)
	if err != nil {
		return err
	}
	req.Standing, req.StandingReason = f.req.Standing, f.req.StandingReason
	run, lease, err := s.runAndLease(ctx, q, req.RunID)
	if err != nil {
		return err
	}
	run.LeaselessDriver = f.run.LeaselessDriver && run.Parked()
	f.req, f.run, f.lease = req, run, lease
	return nil
}

// dressOne adds to one run (as runAndLease read it) its open tool attempt
// and whether a leaseless resume drives it, reading through q.
func (s *Store) dressOne(ctx context.Context, q queryer, bounded bool, run *store.Run) error {
	att, err := s.openAttempts(ctx, q)
	if err != nil {
		return err
	}
	run.Recovery = att[runNum(run.ID)]
	return s.leaselessOne(ctx, q, bounded, run)
}

// leaselessOne says whether a leaseless resume drives one (parked) run:
// what delivery needs (a run's recovery is the state's, not the delivery's).
func (s *Store) leaselessOne(ctx context.Context, q queryer, bounded bool, run *store.Run) error {
	if !run.Parked() {
		return nil
	}
	flags, err := s.leaseless(ctx, q, bounded, []int64{runNum(run.ID)})
	if err != nil {
		return err
	}
	run.LeaselessDriver = flags[runNum(run.ID)]
	return nil
}

func decisionUpdate(d store.Decision) (string, []any, error) {
	switch d.Key.Kind {
	case store.Approval:
		if !d.Verdict.Allows(store.Approval) {
			return "", nil, fmt.Errorf("an approval is decided with approve or deny, not %q", d.Verdict)
		}
		return "UPDATE pending_approvals SET resolved = ? WHERE id = ? AND resolved IS NULL", []any{string(d.Verdict)}, nil
	case store.Question:
		return "UPDATE pending_questions SET answer = ?, answered_by = 'attached', resolved = 1 WHERE id = ? AND resolved = 0",
			[]any{d.Text}, nil
	case store.Plan:
		if !d.Verdict.Allows(store.Plan) {
			return "", nil, fmt.Errorf("a plan is decided with approve, revise or cancel, not %q", d.Verdict)
		}
		correction := any(nil)
		if d.Verdict == store.VerdictRevise {
			correction = d.Text
		}
		return "UPDATE plans SET verdict = ?, correction = ?, decided_by = 'attached', resolved = 1 WHERE id = ? AND resolved = 0",
			[]any{string(d.Verdict), correction}, nil
	}
	return "", nil, fmt.Errorf("unknown request kind %v", d.Key.Kind)
}

// preparedReads reads through the read connection's prepared statements.
type preparedReads struct{ s *Store }

func (p preparedReads) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p preparedReads) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.s.prepared(ctx, q)
	if err != nil {
		return p.s.read.QueryRowContext(ctx, q, args...) // the same error, as a Row
	}
	return st.QueryRowContext(ctx, args...)
}

// requestInTx reads one request inside the deciding transaction.
func requestInTx(ctx context.Context, tx queryer, key store.RequestKey, id int64) (store.Request, error) {
	var q string
	switch key.Kind {
	case store.Approval:
		q = "SELECT id, run_id, step, act, target, NULL, NULL, resolved FROM pending_approvals WHERE id = ?"
	case store.Question:
		q = "SELECT id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at FROM pending_questions WHERE id = ?"
	case store.Plan:
		q = "SELECT id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at FROM plans WHERE id = ?"
	}
	rows, err := tx.QueryContext(ctx, q, id)
	if err != nil {
		return store.Request{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return store.Request{}, err
		}
		return store.Request{}, storeErr("", store.ErrNoSuchReq, key.String(), nil)
	}
	return scanRequest(key.Kind, rows)
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// runAndLease reads a run's status and its effective lease: its own, or
// the nearest ancestor's (io-harness leases only a tree's root).
func (s *Store) runAndLease(ctx context.Context, q queryer, runID string) (store.Run, *store.Lease, error) {
	id, ok := parseID(runID)
	if !ok {
		return store.Run{}, nil, storeErr(s.path, store.ErrNoSuchRun, runID, nil)
	}
	var run store.Run
	seen := map[int64]bool{}
	for cur := id; cur != 0 && !seen[cur]; {
		seen[cur] = true
		var parent sql.NullInt64
		var status, outcome sql.NullString
		err := q.QueryRowContext(ctx, fmt.Sprintf("SELECT %s, %s, outcome FROM runs WHERE id = ?",
			s.si().col("runs", "parent_run_id", "NULL"),
			s.si().col("runs", "status", "CASE WHEN outcome IS NULL THEN 'running' ELSE 'completed' END")), cur).
			Scan(&parent, &status, &outcome)
		if errors.Is(err, sql.ErrNoRows) {
			if cur == id {
				return store.Run{}, nil, storeErr(s.path, store.ErrNoSuchRun, runID, nil)
			}
			break
		}
		if err != nil {
			return store.Run{}, nil, mapDriverErr(s.path, err)
		}
		if cur == id {
			run = store.Run{ID: runID, ParentID: nullIDStr(parent), Status: store.Status(status.String), Outcome: store.Outcome(outcome.String)}
			run.Resumable = resumable(run.Status, run.Outcome)
		}
		if s.si().has("run_leases") {
			l, err := readLease(ctx, q, cur)
			if err != nil {
				return store.Run{}, nil, mapDriverErr(s.path, err)
			}
			if l != nil {
				if cur == id {
					run.Lease = l
				}
				return run, l, nil
			}
		}
		cur = parent.Int64
	}
	return run, nil, nil
}
