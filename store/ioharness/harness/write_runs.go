package harness

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

const isoNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

// StartRun starts a root run: status running, started_at stamped by
// SQLite's clock. Returns the run id.
func (s *Store) StartRun(ctx context.Context, goal, workspace string) (string, error) {
	return s.insert(ctx, "INSERT INTO runs (goal, file, status, started_at) VALUES (?, ?, 'running', "+isoNow+")",
		goal, workspace)
}

// StartChildRun starts a sub-agent under parent at the depth the caller
// gives (io-harness passes the parent's depth + 1; the store never derives it).
func (s *Store) StartChildRun(ctx context.Context, goal, workspace, parentID string, depth int) (string, error) {
	parent, err := s.runKey(parentID)
	if err != nil {
		return "", err
	}
	return s.insert(ctx, "INSERT INTO runs (goal, file, parent_run_id, depth, status, started_at) VALUES (?, ?, ?, ?, 'running', "+isoNow+")",
		goal, workspace, parent, depth)
}

// SetProvider records which provider drives the run.
func (s *Store) SetProvider(ctx context.Context, runID, provider string) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "UPDATE runs SET provider = ? WHERE id = ?", provider, run)
	return err
}

// RecordRunPolicy stores the permission policy (io-harness's serde JSON)
// the run started under.
func (s *Store) RecordRunPolicy(ctx context.Context, runID, policyJSON string) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "INSERT OR REPLACE INTO run_policies (run_id, policy) VALUES (?, ?)", run, policyJSON)
	return err
}

// SetStatus sets the durable status (running, paused, completed, failed).
func (s *Store) SetStatus(ctx context.Context, runID string, status store.Status) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "UPDATE runs SET status = ? WHERE id = ?", string(status), run)
	return err
}

// StatusForOutcome is the durable status io-harness derives from an
// outcome: a run holding an undecided approval or plan is paused; every
// other ending — awaiting_answer included — completes it.
func StatusForOutcome(outcome store.Outcome) store.Status {
	if outcome == store.OutcomeAwaitingApproval || outcome == store.OutcomeAwaitingPlan {
		return store.StatusPaused
	}
	return store.StatusCompleted
}

// FinishRun records the run's outcome and the status it implies; a run that
// really ended also gets its run_outcomes summary. Both land in one
// transaction, so no reader sees an ended run without its summary.
func (s *Store) FinishRun(ctx context.Context, runID string, outcome store.Outcome) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	status := StatusForOutcome(outcome)
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE runs SET outcome = ?, status = ? WHERE id = ?", string(outcome), string(status), run)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return storeErr(s.path, store.ErrNoSuchRun, runID, nil)
		}
		if status != store.StatusCompleted {
			return nil
		}
		return s.writeSummary(ctx, tx, run, outcome)
	})
}

// writeSummary computes the summary as io-harness does: steps = MAX(step),
// tokens = the run's spend, duration from started_at, by SQLite's clock.
func (s *Store) writeSummary(ctx context.Context, tx *sql.Tx, run int64, outcome store.Outcome) error {
	var finished string
	var ms sql.NullFloat64
	err := tx.QueryRowContext(ctx, "SELECT "+isoNow+", (julianday('now') - julianday(started_at)) * 86400000.0 FROM runs WHERE id = ?", run).
		Scan(&finished, &ms)
	if err != nil {
		return err
	}
	var steps, tokens int64
	spend := "SELECT COALESCE(MAX(step), 0), COALESCE(SUM(tokens), 0) FROM steps WHERE run_id = ?"
	if err := tx.QueryRowContext(ctx, spend, run).Scan(&steps, &tokens); err != nil {
		return err
	}
	if s.si().HasCol("runs", "turn_kind") && s.si().Has("provider_calls") {
		// A conversational reply's spend is its provider calls.
		var reply int
		tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM runs WHERE id = ? AND turn_kind = 'reply'", run).Scan(&reply)
		if reply > 0 {
			if err := tx.QueryRowContext(ctx, "SELECT COALESCE(SUM(total_tokens), 0) FROM provider_calls WHERE run_id = ?", run).Scan(&tokens); err != nil {
				return err
			}
		}
	}
	var dur any
	if ms.Valid {
		dur = int64(math.Max(ms.Float64, 0))
	}
	success := 0
	if outcome == store.OutcomeSuccess {
		success = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, run, string(outcome), success, steps, tokens, dur, finished)
	return err
}

// StepRecord is one committed step.
type StepRecord struct {
	Step     int
	Decision string // per-call decisions joined with "; "
	Result   string // the step's observation text
	Prompt   string
	ToolCall string // per-call name:{json} joined with " | "
	Tokens   int64
	// Turn, when set, is what the model wrote this step, stored in
	// step_turns inside the same transaction.
	Turn *Turn
}

// Turn is the assistant's text and tool calls for a step.
type Turn struct {
	Text  *string // nil: the model wrote nothing (not the same as "")
	Calls []ToolCall
}

// ToolCall is one call the model made.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CheckpointStep commits a step: the step row, its checkpoint event and (if
// given) its turn land together or not at all. When this handle holds the
// run's lease, the commit first checks the generation — a takeover by
// another owner makes it fail with ConflictError — and renews the lease.
func (s *Store) CheckpointStep(ctx context.Context, runID string, st StepRecord) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	var calls []byte
	if st.Turn != nil {
		if calls, err = encodeCalls(st.Turn.Calls); err != nil {
			return fmt.Errorf("run %s step %d has tool calls that cannot be stored: %w", runID, st.Step, err)
		}
	}
	gen, leased := s.owner.generation(run)
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if leased {
			var got int64
			err := tx.QueryRowContext(ctx, "SELECT generation FROM run_leases WHERE run_id = ? AND owner = ?", run, s.owner.id).Scan(&got)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && got != gen) {
				tx.Rollback()
				return s.conflict(ctx, runID, run)
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, run, st.Step, st.Decision, st.Result, st.Prompt, st.ToolCall, st.Tokens); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO checkpoint_events (run_id, step, kind, detail) VALUES (?, ?, 'checkpoint', NULL)",
			run, st.Step); err != nil {
			return err
		}
		if st.Turn != nil {
			if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO step_turns (run_id, step, text, calls) VALUES (?, ?, ?, ?)",
				run, st.Step, st.Turn.Text, string(calls)); err != nil {
				return err
			}
		}
		if leased {
			if _, err := tx.ExecContext(ctx, "UPDATE run_leases SET renewed_at = "+isoNow+" WHERE run_id = ? AND owner = ?",
				run, s.owner.id); err != nil {
				return err
			}
		}
		return nil
	})
}

// encodeCalls writes tool calls as io-harness's write_step_turn does:
// serde_json::to_string of a Vec<ToolCall { name, arguments: Value }>, the
// fields in declaration order, each call's arguments parsed and written as
// serde_json does (serdejson.go). Missing arguments are the empty object.
func encodeCalls(calls []ToolCall) ([]byte, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range calls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":`)
		serdeString(&b, c.Name)
		b.WriteString(`,"arguments":`)
		args := []byte("{}")
		if len(c.Arguments) > 0 {
			var err error
			if args, err = serdeValue(c.Arguments); err != nil {
				return nil, fmt.Errorf("call %d (%s): %w", i+1, c.Name, err)
			}
		}
		b.Write(args)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return []byte(b.String()), nil
}

// RecordStepRow writes a bare step row outside the checkpoint: io-harness
// does this for provider retries, escalations and compactions.
func (s *Store) RecordStepRow(ctx context.Context, runID string, st StepRecord) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, run, st.Step, st.Decision, st.Result, st.Prompt, st.ToolCall, st.Tokens)
	return err
}

// RecordRetry writes the row io-harness writes before a provider retry:
// "retry N after <kind> in <wait>", N counted from 1, the wait in Rust's
// Debug form (500ms, 1s, 1.5s).
func (s *Store) RecordRetry(ctx context.Context, runID string, step, attempt int, kind string, wait time.Duration, errText string) error {
	return s.RecordStepRow(ctx, runID, StepRecord{
		Step:     step,
		Decision: fmt.Sprintf("retry %d after %s in %s", attempt, kind, RustDuration(wait)),
		Result:   errText,
	})
}

// RecordCheckpointEvent writes a checkpoint, resume or skipped marker.
func (s *Store) RecordCheckpointEvent(ctx context.Context, runID string, step int, kind, detail string) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "INSERT INTO checkpoint_events (run_id, step, kind, detail) VALUES (?, ?, ?, ?)",
		run, step, kind, nullable(detail))
	return err
}

// LastStep is the highest step number recorded for the run (0 if none):
// the point a resume continues from.
func (s *Store) LastStep(ctx context.Context, runID string) (int, error) {
	run, ok := schema.ParseID(runID)
	if !ok {
		return 0, nil
	}
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(step), 0) FROM steps WHERE run_id = ?", run).Scan(&n)
	return n, mapDriverErr(s.path, err)
}

// SpentTokens is what the run has spent: its steps' tokens, or for a
// conversational reply its provider calls' totals.
func (s *Store) SpentTokens(ctx context.Context, runID string) (int64, error) {
	run, ok := schema.ParseID(runID)
	if !ok {
		return 0, nil
	}
	if s.si().Has("provider_calls") && s.si().HasCol("runs", "turn_kind") {
		var calls, tokens int64
		err := s.read.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(total_tokens), 0) FROM provider_calls
			WHERE run_id = ? AND run_id IN (SELECT id FROM runs WHERE turn_kind = 'reply')`, run).Scan(&calls, &tokens)
		if err != nil {
			return 0, mapDriverErr(s.path, err)
		}
		if calls > 0 {
			return tokens, nil
		}
	}
	var tokens int64
	err := s.read.QueryRowContext(ctx, "SELECT COALESCE(SUM(tokens), 0) FROM steps WHERE run_id = ?", run).Scan(&tokens)
	return tokens, mapDriverErr(s.path, err)
}

// SpentTokensTree is the tokens spent by a run and everything under it (steps
// only, as io-harness counts the tree ledger).
func (s *Store) SpentTokensTree(ctx context.Context, rootID string) (int64, error) {
	root, err := s.runKey(rootID)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM runs WHERE id = ?", root).Scan(&n); err != nil {
		return 0, mapDriverErr(s.path, err)
	}
	if n == 0 {
		return 0, storeErr(s.path, store.ErrNoSuchRun, rootID, nil)
	}
	tree := "?"
	if s.si().HasCol("runs", "parent_run_id") {
		tree = `WITH RECURSIVE tree(id) AS (
			SELECT id FROM runs WHERE id = ?
			UNION SELECT c.id FROM runs c JOIN tree t ON c.parent_run_id = t.id)
		SELECT id FROM tree`
	}
	var total int64
	err = s.read.QueryRowContext(ctx, "SELECT COALESCE(SUM(tokens), 0) FROM steps WHERE run_id IN ("+tree+")", root).Scan(&total)
	return total, mapDriverErr(s.path, err)
}

// ElapsedSeconds is the wall-clock time since the run started, by SQLite's
// clock (0 for a run with no start stamp).
func (s *Store) ElapsedSeconds(ctx context.Context, runID string) (float64, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return 0, err
	}
	var secs sql.NullFloat64
	err = s.read.QueryRowContext(ctx, "SELECT (julianday('now') - julianday(started_at)) * 86400.0 FROM runs WHERE id = ?", run).Scan(&secs)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, storeErr(s.path, store.ErrNoSuchRun, runID, nil)
	}
	if err != nil {
		return 0, mapDriverErr(s.path, err)
	}
	return math.Max(secs.Float64, 0), nil
}

// CheckResumable applies io-harness's checks before a resume: the format is
// not newer than this layer, the run exists, and it is not a conversational
// turn that stopped mid-answer.
func (s *Store) CheckResumable(ctx context.Context, runID string) error {
	var v int64
	if err := s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return mapDriverErr(s.path, err)
	}
	if v > schema.FormatVersion {
		return storeErr(s.path, store.ErrNotResumable,
			fmt.Sprintf("checkpoint format %d is newer than supported %d; upgrade to resume this run", v, schema.FormatVersion), nil)
	}
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	var one int
	if err := s.read.QueryRowContext(ctx, "SELECT 1 FROM runs WHERE id = ?", run).Scan(&one); err != nil {
		return storeErr(s.path, store.ErrNotResumable, fmt.Sprintf("no run with id %s in the store", runID), nil)
	}
	if s.si().HasCol("runs", "turn_kind") {
		err := s.read.QueryRowContext(ctx, "SELECT 1 FROM runs WHERE id = ? AND turn_kind = 'reply' AND status = 'running'", run).Scan(&one)
		if err == nil {
			return storeErr(s.path, store.ErrNotResumable, fmt.Sprintf(
				"run %s is a conversational turn that was answering when it stopped; it committed no step, so there is nothing to continue — take the turn again", runID), nil)
		}
	}
	return nil
}

// RustDuration formats a duration as Rust's Debug for std::time::Duration
// does (500ms, 1s, 1.5s, 90s, 0ns), which io-harness writes into retry rows.
func RustDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	unit, div := "ns", time.Duration(1)
	switch {
	case d >= time.Second:
		unit, div = "s", time.Second
	case d >= time.Millisecond:
		unit, div = "ms", time.Millisecond
	case d >= time.Microsecond:
		unit, div = "µs", time.Microsecond
	}
	whole := d / div
	frac := d % div
	if frac == 0 {
		return fmt.Sprintf("%d%s", whole, unit)
	}
	digits := fmt.Sprintf("%0*d", len(fmt.Sprint(int64(div)))-1, int64(frac))
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return fmt.Sprintf("%d.%s%s", whole, digits, unit)
}
