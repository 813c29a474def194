package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// toolCallSummaryBytes caps the tool call a timeline row carries; the step
// detail reads the whole call.
const toolCallSummaryBytes = 240

// stepRowCols are the columns a StepRow is read from, after id, run_id and
// step: text is cut in SQL so a huge prompt or result is never loaded.
var stepRowCols = fmt.Sprintf("decision, substr(tool_call, 1, %d), substr(ltrim(result, char(10, 13, 32)), 1, %d), tokens",
	toolCallSummaryBytes, toolCallSummaryBytes)

// headLine keeps a result's first line.
func headLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// auxRow matches the rows io-harness writes under a step's number before (or
// instead of) committing it. io-harness has no column for what a steps row
// is: its retry, escalation and compaction rows are told apart by the
// decision text it writes for them ("retry 2 after Timeout in 1s",
// "escalated after …", "compacting after …"), and that text is this
// format's fact, so it is read here and nowhere else.
var auxRow = regexp.MustCompile(`^(?:(retry) \d+ after |(escalated) after |(compacting) after )`)

// stepKind is what an io-harness steps row is, from its decision text.
func stepKind(decision string) store.StepKind {
	m := auxRow.FindStringSubmatch(decision)
	switch {
	case m == nil:
		return store.StepTurn
	case m[1] != "":
		return store.StepRetry
	case m[2] != "":
		return store.StepEscalation
	}
	return store.StepCompaction
}

// Steps returns a run's timeline: one entry per step, provider retries
// folded under it. It reads every row of the run (rows.go): a retry of step
// 1 written long before step 1's commit is still folded under it.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	rows, err := readRuns(ctx, s, runSpec{table: "steps", cols: stepRowCols, runs: []int64{run}},
		func(r *sql.Rows) (store.StepRow, error) {
			x, _, err := scanStepRow(r)
			return x, err
		})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	steps := store.AppendStepRows(nil, rows)
	calls, err := s.providerCalls(ctx, run, allSteps)
	if err != nil {
		return nil, err
	}
	store.StampSteps(steps, calls)
	return steps, nil
}

func scanStepRow(r *sql.Rows) (store.StepRow, int64, error) {
	var x store.StepRow
	var run int64
	err := r.Scan(&x.RowID, &run, &x.Number, &x.Decision, &x.ToolCall, &x.ResultHead, &x.Tokens)
	x.RunID, x.ResultHead, x.Kind = idStr(run), headLine(x.ResultHead), stepKind(x.Decision)
	return x, run, err
}

func reverse[T any](xs []T) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// capped reads a text column cut at MaxDetailBytes plus its whole length.
func capped(col string) string {
	return fmt.Sprintf("substr(%s, 1, %d), length(CAST(%s AS BLOB))", col, store.MaxDetailBytes, col)
}

// StepDetail reads everything recorded about one step row: its full text,
// the turn, ledger observations, edits, policy events and provider calls
// under the same step number.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	var d store.StepDetail
	var runCol int64
	var nPrompt, nResult, nTool int64
	err = s.read.QueryRowContext(ctx, "SELECT run_id, step, decision, tokens, "+capped("prompt")+", "+capped("result")+", "+capped("tool_call")+
		" FROM steps WHERE id = ?", rowID).
		Scan(&runCol, &d.Number, &d.Decision, &d.Tokens, &d.Prompt, &nPrompt, &d.Result, &nResult, &d.ToolCallFull, &nTool)
	if err == sql.ErrNoRows || (err == nil && runCol != run) {
		return store.StepDetail{}, storeErr(s.path, store.ErrNoSuchRun, fmt.Sprintf("run %s has no step row %d", runID, rowID), nil)
	}
	if err != nil {
		return store.StepDetail{}, mapDriverErr(s.path, err)
	}
	d.RowID, d.RunID, d.Kind = rowID, runID, stepKind(d.Decision)
	d.ToolCall = d.ToolCallFull
	for name, n := range map[string]int64{"prompt": nPrompt, "result": nResult, "tool call": nTool} {
		if n > store.MaxDetailBytes {
			d.Truncated = append(d.Truncated, name)
		}
	}
	if err := s.stepExtras(ctx, run, &d); err != nil {
		return store.StepDetail{}, err
	}
	if d.Tools == nil && d.Kind == store.StepTurn {
		d.Tools = summaryCalls(d.ToolCallFull)
	}
	return d, nil
}

// stepExtras fills the per-step rows of other tables: every row of the run
// under the step's number, wherever in the table it was written (a resume
// writes rows for old steps late).
func (s *Store) stepExtras(ctx context.Context, run int64, d *store.StepDetail) error {
	n := d.Number
	if s.si().has("step_turns") {
		var text sql.NullString
		var calls string
		err := s.read.QueryRowContext(ctx, "SELECT text, calls FROM step_turns WHERE run_id = ? AND step = ?", run, n).Scan(&text, &calls)
		if err == nil {
			d.TurnText, d.HasTurnText = text.String, text.Valid
			d.Tools = turnCalls(calls)
		} else if err != sql.ErrNoRows {
			return mapDriverErr(s.path, err)
		}
	}
	if s.si().has("ledger_observations") {
		obs, err := readRuns(ctx, s, runSpec{table: "ledger_observations",
			cols:  fmt.Sprintf("kind, target, substr(text, 1, %d)", store.MaxDetailBytes),
			where: "step = ?", args: []any{n}, runs: []int64{run}},
			func(r *sql.Rows) (store.Observation, error) {
				var id, run int64
				var o store.Observation
				var target, text sql.NullString
				err := r.Scan(&id, &run, &o.Step, &o.Kind, &target, &text)
				o.Target, o.Text = target.String, text.String
				return o, err
			})
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		d.Observations = obs
	}
	if s.si().has("edits") {
		hunk := s.si().col("edits", "hunk", "NULL")
		edits, err := readRuns(ctx, s, runSpec{table: "edits",
			cols:  fmt.Sprintf("tool, path, lines_added, lines_removed, substr(%s, 1, %d)", hunk, store.MaxDetailBytes),
			where: "step = ?", args: []any{n}, runs: []int64{run}},
			func(r *sql.Rows) (store.Edit, error) {
				var id, run int64
				var step int
				var e store.Edit
				var h sql.NullString
				err := r.Scan(&id, &run, &step, &e.Tool, &e.Path, &e.LinesAdded, &e.LinesRemoved, &h)
				e.Hunk = h.String
				return e, err
			})
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		d.Edits = edits
	}
	pol, err := s.policyEvents(ctx, run, n)
	if err != nil {
		return err
	}
	d.Policy = pol
	calls, err := s.providerCalls(ctx, run, n)
	if err != nil {
		return err
	}
	d.ProviderCalls = calls
	return nil
}

// ContextSamples returns the run's per-turn context sizes ("assembled"
// events): the estimate beside the provider's count, which may be missing.
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	if !s.si().has("context_events") {
		return nil, nil
	}
	out, err := readRuns(ctx, s, runSpec{table: "context_events",
		cols: "est_tokens, reported_tokens, detail", where: "kind = 'assembled'", runs: []int64{run}},
		func(r *sql.Rows) (store.ContextSample, error) {
			c, _, _, err := scanSample(r)
			return c, err
		})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	return out, nil
}

func scanSample(r *sql.Rows) (store.ContextSample, int64, int, error) {
	var c store.ContextSample
	var run int64
	var est, rep sql.NullInt64
	var detail sql.NullString
	err := r.Scan(&c.RowID, &run, &c.Step, &est, &rep, &detail)
	c.RunID, c.Estimated, c.NoEstimate, c.Reported, c.Detail = idStr(run), est.Int64, !est.Valid, nullInt(rep), detail.String
	return c, run, c.Step, err
}
