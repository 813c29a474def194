package harness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// The harness side of human-in-the-loop: it asks (Put…), and may decide
// through its own approver (Resolve…, Answer…, Decide…). Every decision is
// one guarded UPDATE — a compare-and-set on the undecided row — so of any
// number of deciders exactly one wins, and each learns whether it did.

// PutPending records an action the policy routed to "ask". content is the
// write payload (nil for other acts). Returns the request id.
func (s *Store) PutPending(ctx context.Context, runID string, step int, act, target string, content *string) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	var c any
	if content != nil {
		c = *content
	}
	return s.insert(ctx, "INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (?, ?, ?, ?, ?)",
		run, step, act, target, c)
}

// ResolvePending decides an approval: approve or deny, nothing else
// (io-harness reads any other word as a denial). Won is false when the row
// was already decided; then Decision holds what won.
func (s *Store) ResolvePending(ctx context.Context, requestID string, decision store.Verdict) (store.DecideResult, error) {
	if !decision.Allows(store.Approval) {
		return store.DecideResult{}, fmt.Errorf("an approval is decided with approve or deny, not %q", decision)
	}
	return s.cas(ctx, store.RequestKey{Kind: store.Approval, ID: requestID},
		"UPDATE pending_approvals SET resolved = ? WHERE id = ? AND resolved IS NULL", string(decision))
}

// PutQuestion records a question for a human. Returns its id.
func (s *Store) PutQuestion(ctx context.Context, runID string, step int, question, qctx string, choices []string) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	if err := s.needTable("pending_questions"); err != nil {
		return "", err
	}
	// put_question: serde_json::to_string(&q.choices), NULL when there are none.
	var ch any
	if len(choices) > 0 {
		ch = serdeStrings(choices)
	}
	return s.insert(ctx, "INSERT INTO pending_questions (run_id, step, question, context, choices) VALUES (?, ?, ?, ?, ?)",
		run, step, question, nullable(qctx), ch)
}

// AnswerQuestion answers a question once; by is responder, human or attached.
func (s *Store) AnswerQuestion(ctx context.Context, questionID, answer, by string) (store.DecideResult, error) {
	return s.cas(ctx, store.RequestKey{Kind: store.Question, ID: questionID},
		"UPDATE pending_questions SET answer = ?, answered_by = ?, resolved = 1 WHERE id = ? AND resolved = 0", answer, by)
}

// PutPlan records a proposed plan. Returns its id.
func (s *Store) PutPlan(ctx context.Context, runID string, step int, steps []store.PlanStep) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	if err := s.needTable("plans"); err != nil {
		return "", err
	}
	return s.insert(ctx, "INSERT INTO plans (run_id, step, steps) VALUES (?, ?, ?)", run, step, encodePlanSteps(steps))
}

// encodePlanSteps is put_plan's serde_json::to_string(&plan.steps): each
// PlanStep { intent, agent } in declaration order, agent left out when it
// has none (skip_serializing_if = "Option::is_none").
func encodePlanSteps(steps []store.PlanStep) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range steps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"intent":`)
		serdeString(&b, p.Intent)
		if p.Agent != "" {
			b.WriteString(`,"agent":`)
			serdeString(&b, p.Agent)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// DecidePlan decides a plan once: approve, revise (with a correction) or
// cancel; by is gate, human or attached.
func (s *Store) DecidePlan(ctx context.Context, planID string, verdict store.Verdict, correction, by string) (store.DecideResult, error) {
	if !verdict.Allows(store.Plan) {
		return store.DecideResult{}, fmt.Errorf("a plan is decided with approve, revise or cancel, not %q", verdict)
	}
	if verdict != store.VerdictRevise {
		correction = ""
	}
	return s.cas(ctx, store.RequestKey{Kind: store.Plan, ID: planID},
		"UPDATE plans SET verdict = ?, correction = ?, decided_by = ?, resolved = 1 WHERE id = ? AND resolved = 0",
		string(verdict), nullable(correction), by)
}

// cas runs one guarded UPDATE (the request id is appended as the last
// argument) and, when it changed nothing, reads back what won.
func (s *Store) cas(ctx context.Context, key store.RequestKey, update string, args ...any) (store.DecideResult, error) {
	id, ok := schema.ParseID(key.ID)
	if !ok {
		return store.DecideResult{}, storeErr(s.path, store.ErrNoSuchReq, key.String(), nil)
	}
	res, err := s.exec(ctx, update, append(args, id)...)
	if err != nil {
		return store.DecideResult{}, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return store.DecideResult{Won: true}, nil
	}
	req, err := s.Request(ctx, key)
	if err != nil {
		return store.DecideResult{}, err
	}
	return store.DecideResult{Decision: req.Decision, DecidedBy: req.DecidedBy}, nil
}

// requestRows are where each kind of request lies, and its run, step and
// decision: what a harness polls for.
var requestRows = map[store.RequestKind]struct{ table, cols string }{
	store.Approval: {"pending_approvals", "run_id, step, resolved IS NOT NULL, resolved, NULL, NULL"},
	store.Question: {"pending_questions", "run_id, step, resolved, answer, answered_by, NULL"},
	store.Plan:     {"plans", "run_id, step, resolved, verdict, decided_by, correction"},
}

// Request reads a request's own row as the harness polls it: whether it is
// decided, with what and by whom (and a plan's correction). The reader's
// judgements of it (standing, the runs above it) are store/ioharness's.
func (s *Store) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	id, ok := schema.ParseID(key.ID)
	rows, known := requestRows[key.Kind]
	if !ok || !known || !s.si().Has(rows.table) {
		return store.Request{}, storeErr(s.path, store.ErrNoSuchReq, key.String(), nil)
	}
	req := store.Request{Kind: key.Kind, ID: key.ID}
	var run int64
	var decision, by, correction sql.NullString
	err := s.read.QueryRowContext(ctx, "SELECT "+rows.cols+" FROM "+rows.table+" WHERE id = ?", id).
		Scan(&run, &req.Step, &req.Resolved, &decision, &by, &correction)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Request{}, storeErr(s.path, store.ErrNoSuchReq, key.String(), nil)
	}
	if err != nil {
		return store.Request{}, mapDriverErr(s.path, err)
	}
	req.RunID, req.Decision, req.DecidedBy, req.Correction = schema.ID(run), decision.String, by.String, correction.String
	return req, nil
}
