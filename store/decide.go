package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Decision is what a person decides about a request.
type Decision struct {
	Key     RequestKey
	Verdict string // approval: approve | deny; plan: approve | revise | cancel
	Text    string // a question's answer; a revise verdict's correction
}

// Delivery says what writing a decision now would do.
type Delivery int

const (
	Deliverable     Delivery = iota // the run is live and parked: it reads the decision within ~200 ms
	DeliveryUnknown                 // the store records no leases: the run reads it if it still waits
	Deferred                        // the run is paused: its host must resume it with the decision
	NotLive                         // the driver is gone: nobody would read it, a resume asks again
	Closed                          // the run has ended
)

// Writable reports whether a decision may be written in this case.
func (d Delivery) Writable() bool { return d == Deliverable || d == DeliveryUnknown }

// ClassifyDelivery tells whether a decision written now reaches the run that
// asked, and if not, why, in one line. lease is the run's effective lease
// (its own or its tree root's).
func ClassifyDelivery(r Run, lease *Lease, recordsLeases bool, now time.Time) (Delivery, string) {
	live := LivenessOf(lease, recordsLeases, now)
	driven := live == Live || live == Lapsed
	switch {
	case (r.Status == "paused" || r.Outcome == "awaiting_answer") && !driven:
		return Deferred, fmt.Sprintf("run %s is paused (%s): io-harness's resume refuses a request that is already decided, so decide it through the host that resumes the run",
			r.ID, orDash(r.Outcome))
	case (r.Status == "completed" || r.Status == "failed") && r.Outcome != "awaiting_answer":
		return Closed, fmt.Sprintf("run %s has ended (%s)", r.ID, orDash(r.Outcome))
	}
	switch live {
	case LivenessUnknown:
		return DeliveryUnknown, ""
	case Live:
		return Deliverable, ""
	case Lapsed:
		return Deliverable, "" // parked runs commit nothing, so their lease lapses while they wait
	case Dead:
		return NotLive, fmt.Sprintf("run %s's driver (pid %d) is gone: nobody would read the decision, and a resume asks again", r.ID, lease.OwnerPID())
	}
	return NotLive, fmt.Sprintf("run %s has no driver (no lease): nobody would read the decision, and a resume asks again", r.ID)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Delivery classifies a request as it stands now.
func (s *Store) Delivery(ctx context.Context, key RequestKey) (Delivery, string, error) {
	req, err := s.Request(ctx, key)
	if err != nil {
		return 0, "", err
	}
	run, lease, err := s.runAndLease(ctx, s.read, req.RunID)
	if err != nil {
		return 0, "", err
	}
	d, why := ClassifyDelivery(run, lease, s.RecordsLeases(), time.Now())
	return d, why, nil
}

// Decide writes a person's decision as a compare-and-set on the undecided
// row, inside one BEGIN IMMEDIATE transaction that first checks the run can
// still receive it. It returns Won false (with what won) when someone else
// decided first, a RefusedError when the run is paused, ended or has no
// live driver, and ErrReadOnly when the store cannot be written.
func (s *Store) Decide(ctx context.Context, d Decision) (DecideResult, error) {
	update, args, err := decisionUpdate(d)
	if err != nil {
		return DecideResult{}, err
	}
	id, ok := parseID(d.Key.ID)
	if !ok {
		return DecideResult{}, storeErr(s.path, ErrNoSuchReq, d.Key.String(), nil)
	}
	var result DecideResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		req, err := requestInTx(ctx, tx, d.Key, id)
		if err != nil {
			return err
		}
		if req.Resolved {
			result = DecideResult{Decision: req.Decision, DecidedBy: req.DecidedBy}
			return nil
		}
		run, lease, err := s.runAndLease(ctx, tx, req.RunID)
		if err != nil {
			return err
		}
		if dl, why := ClassifyDelivery(run, lease, s.RecordsLeases(), time.Now()); !dl.Writable() {
			return &RefusedError{Key: d.Key, Reason: why, Delivery: dl}
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

func decisionUpdate(d Decision) (string, []any, error) {
	switch d.Key.Kind {
	case Approval:
		if d.Verdict != "approve" && d.Verdict != "deny" {
			return "", nil, fmt.Errorf("an approval is decided with approve or deny, not %q", d.Verdict)
		}
		return "UPDATE pending_approvals SET resolved = ? WHERE id = ? AND resolved IS NULL", []any{d.Verdict}, nil
	case Question:
		return "UPDATE pending_questions SET answer = ?, answered_by = 'attached', resolved = 1 WHERE id = ? AND resolved = 0",
			[]any{d.Text}, nil
	case Plan:
		correction := any(nil)
		switch d.Verdict {
		case "revise":
			correction = d.Text
		case "approve", "cancel":
		default:
			return "", nil, fmt.Errorf("a plan is decided with approve, revise or cancel, not %q", d.Verdict)
		}
		return "UPDATE plans SET verdict = ?, correction = ?, decided_by = 'attached', resolved = 1 WHERE id = ? AND resolved = 0",
			[]any{d.Verdict, correction}, nil
	}
	return "", nil, fmt.Errorf("unknown request kind %v", d.Key.Kind)
}

// requestInTx reads one request inside the deciding transaction.
func requestInTx(ctx context.Context, tx *sql.Tx, key RequestKey, id int64) (Request, error) {
	var q string
	switch key.Kind {
	case Approval:
		q = "SELECT id, run_id, step, act, target, NULL, NULL, resolved FROM pending_approvals WHERE id = ?"
	case Question:
		q = "SELECT id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at FROM pending_questions WHERE id = ?"
	case Plan:
		q = "SELECT id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at FROM plans WHERE id = ?"
	}
	rows, err := tx.QueryContext(ctx, q, id)
	if err != nil {
		return Request{}, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Request{}, err
		}
		return Request{}, &Error{Kind: ErrNoSuchReq, Detail: key.String()}
	}
	return scanRequest(key.Kind, rows)
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// runAndLease reads a run's status and its effective lease: its own, or
// the nearest ancestor's (io-harness leases only a tree's root).
func (s *Store) runAndLease(ctx context.Context, q queryer, runID string) (Run, *Lease, error) {
	id, ok := parseID(runID)
	if !ok {
		return Run{}, nil, storeErr(s.path, ErrNoSuchRun, runID, nil)
	}
	var run Run
	seen := map[int64]bool{}
	for cur := id; cur != 0 && !seen[cur]; {
		seen[cur] = true
		var parent sql.NullInt64
		var status, outcome sql.NullString
		err := q.QueryRowContext(ctx, fmt.Sprintf("SELECT %s, %s, outcome FROM runs WHERE id = ?",
			s.schema.col("runs", "parent_run_id", "NULL"),
			s.schema.col("runs", "status", "CASE WHEN outcome IS NULL THEN 'running' ELSE 'completed' END")), cur).
			Scan(&parent, &status, &outcome)
		if errors.Is(err, sql.ErrNoRows) {
			if cur == id {
				return Run{}, nil, storeErr(s.path, ErrNoSuchRun, runID, nil)
			}
			break
		}
		if err != nil {
			return Run{}, nil, mapDriverErr(s.path, err)
		}
		if cur == id {
			run = Run{ID: runID, ParentID: nullIDStr(parent), Status: status.String, Outcome: outcome.String}
		}
		if s.schema.has("run_leases") {
			l, err := readLease(ctx, q, cur)
			if err != nil {
				return Run{}, nil, mapDriverErr(s.path, err)
			}
			if l != nil {
				return run, l, nil
			}
		}
		cur = parent.Int64
	}
	return run, nil, nil
}
