package ioharness

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// allSteps asks the per-run readers for every step, not one.
const allSteps = -1

// PolicyEvents returns the run's refusals and decisions, oldest first.
func (s *Store) PolicyEvents(ctx context.Context, runID string) ([]store.PolicyEvent, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	return s.policyEvents(ctx, run, allSteps)
}

// stepFilter narrows an exact read to one step, or leaves it whole.
func stepFilter(sp runSpec, step int) runSpec {
	if step != allSteps {
		sp.oneStep, sp.step = true, step
	}
	return sp
}

// policyEvents reads every refusal and decision of the run (or of one of
// its steps), in row order. A resume writes rows late under old step
// numbers (the provider's net check at step 0, a resumed:<id> decision at
// the deferred step): they are all read.
func (s *Store) policyEvents(ctx context.Context, run int64, step int) ([]store.PolicyEvent, error) {
	sp := stepFilter(runSpec{table: "policy_events", runs: []int64{run},
		cols: "kind, act, target, rule, layer, decision, source, performed"}, step)
	evs, err := readRuns(ctx, s, sp, func(r *sql.Rows) (store.PolicyEvent, error) {
		var e store.PolicyEvent
		var run int64
		var rule, layer, decision, source, performed sql.NullString
		err := r.Scan(&e.RowID, &run, &e.Step, &e.Kind, &e.Act, &e.Target, &rule, &layer, &decision, &source, &performed)
		e.RunID = idStr(run)
		e.Rule, e.Layer, e.Decision, e.Source, e.Performed = rule.String, layer.String, store.PolicyVerdict(decision.String), source.String, performed.String
		return e, err
	})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	return evs, nil
}

// AgentEvents returns the tree events of the given runs (spawns, spawn
// refusals, budget draws, messages), oldest first.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	if !s.si().has("agent_events") {
		return nil, nil
	}
	evs, err := readRuns(ctx, s, runSpec{table: "agent_events", runs: parseIDs(runIDs),
		cols: "kind, child_run_id, detail, tokens, remaining"},
		func(r *sql.Rows) (store.AgentEvent, error) {
			var e store.AgentEvent
			var run int64
			var child, tokens, remaining sql.NullInt64
			var detail sql.NullString
			err := r.Scan(&e.RowID, &run, &e.Step, &e.Kind, &child, &detail, &tokens, &remaining)
			e.RunID, e.ChildRunID, e.Detail = idStr(run), nullIDStr(child), detail.String
			e.Tokens, e.Remaining = nullInt(tokens), nullInt(remaining)
			return e, err
		})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	return evs, nil
}

// Events returns the run's sandbox, MCP and checkpoint events, each source
// in row order, sorted by step.
func (s *Store) Events(ctx context.Context, runID string) ([]Event, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	var out []Event
	type src struct{ table, name, cols string }
	for _, t := range []src{
		{"sandbox_events", "sandbox", "kind, detail, backend, NULL, NULL, NULL, NULL"},
		{"mcp_events", "mcp", "kind, detail, NULL, server, tool, ok, millis"},
		{"checkpoint_events", "checkpoint", "kind, detail, NULL, NULL, NULL, NULL, NULL"},
	} {
		if !s.si().has(t.table) {
			continue
		}
		evs, err := readRuns(ctx, s, runSpec{table: t.table, runs: []int64{run}, cols: t.cols},
			func(r *sql.Rows) (Event, error) {
				e := Event{Source: t.name}
				var run int64
				var detail, backend, server, tool sql.NullString
				var ok, millis sql.NullInt64
				err := r.Scan(&e.RowID, &run, &e.Step, &e.Kind, &detail, &backend, &server, &tool, &ok, &millis)
				e.RunID, e.Detail, e.Backend, e.Server, e.Tool = idStr(run), detail.String, backend.String, server.String, tool.String
				if ok.Valid {
					b := ok.Int64 != 0
					e.OK = &b
				}
				if millis.Valid {
					d := time.Duration(millis.Int64) * time.Millisecond
					e.Millis = &d
				}
				return e, err
			})
		if err != nil {
			return nil, mapDriverErr(s.path, err)
		}
		out = append(out, evs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out, nil
}

// ProviderCalls returns every provider attempt of the run, oldest first.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	return s.providerCalls(ctx, run, allSteps)
}

func (s *Store) providerCalls(ctx context.Context, run int64, step int) ([]store.ProviderCall, error) {
	if !s.si().has("provider_calls") {
		return nil, nil
	}
	if step != allSteps {
		// Its index is by run_id alone: one step of a long run is read
		// from the blocks that may hold it (stepzones.go).
		cols := strings.TrimPrefix(s.providerCallCols(), "id, run_id, step, ")
		out, err := readRuns(ctx, s, stepFilter(runSpec{table: "provider_calls", cols: cols, runs: []int64{run}}, step), scanProviderCall)
		return out, mapDriverErr(s.path, err)
	}
	// provider_calls has a run_id index (io-harness 0.37+); older stores
	// scan a table that is small next to steps.
	q := "SELECT " + s.providerCallCols() + " FROM provider_calls WHERE run_id = ?"
	args := []any{run}
	var out []store.ProviderCall
	err := s.eachRow(ctx, q+" ORDER BY id", args, func(r *sql.Rows) error {
		c, err := scanProviderCall(r)
		out = append(out, c)
		return err
	})
	return out, err
}

// providerCallCols are the columns a ProviderCall is read from, in the
// store's shape: every one of them is in io-harness's 0.18 table, but a
// column a store lacks reads as NULL.
func (s *Store) providerCallCols() string {
	col := func(c string) string { return s.si().col("provider_calls", c, "NULL") }
	return "id, run_id, step, attempt, provider, model, prompt_tokens, completion_tokens, total_tokens, " +
		col("cache_read_tokens") + ", " + col("cache_write_tokens") + ", " + col("reasoning_tokens") + ", " +
		col("server_tool_requests") + ", latency_ms, " + col("ttft_ms") + ", finish_reason, failure, at"
}

func scanProviderCall(r *sql.Rows) (store.ProviderCall, error) {
	var c store.ProviderCall
	var run int64
	var model, finish, failure sql.NullString
	var pt, ct, tt, cr, cw, rt, st, ttft sql.NullInt64
	var at string
	err := r.Scan(&c.RowID, &run, &c.Step, &c.Attempt, &c.Provider, &model, &pt, &ct, &tt, &cr, &cw, &rt, &st,
		&c.LatencyMS, &ttft, &finish, &failure, &at)
	c.RunID = idStr(run)
	c.Model, c.FinishReason, c.Failure = model.String, finish.String, failure.String
	c.PromptTokens, c.CompletionTokens, c.TotalTokens = nullInt(pt), nullInt(ct), nullInt(tt)
	// io-harness writes the breakdown with the usage or not at all
	// (record_provider_call: every count is u.map(…)), and reads a NULL total
	// as "no usage": the breakdown of such a row is not reported either.
	if tt.Valid {
		c.CacheReadTokens, c.CacheWriteTokens, c.ReasoningTokens, c.ServerToolCalls = nullInt(cr), nullInt(cw), nullInt(rt), nullInt(st)
	}
	c.TTFTMS = nullInt(ttft)
	c.At = parseTime(at)
	return c, err
}
