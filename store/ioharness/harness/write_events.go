package harness

import (
	"context"
	"database/sql"
	"time"

	"github.com/vigil-run/vigil/store"
)

// RecordPolicyEvent writes a refusal or a decision of the permission policy.
func (s *Store) RecordPolicyEvent(ctx context.Context, e store.PolicyEvent) error {
	run, err := s.runKey(e.RunID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO policy_events (run_id, step, kind, act, target, rule, layer, decision, source, performed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, run, e.Step, string(e.Kind), e.Act, e.Target,
		nullable(e.Rule), nullable(e.Layer), nullable(string(e.Decision)), nullable(e.Source), nullable(e.Performed))
	return err
}

// RecordAgentEvent writes a tree event: spawn, spawn_refused, spawn_args,
// budget_draw, said, message_sent, message_read. RunID is the acting agent.
func (s *Store) RecordAgentEvent(ctx context.Context, e store.AgentEvent) error {
	run, err := s.runKey(e.RunID)
	if err != nil {
		return err
	}
	var child any
	if e.ChildRunID != "" {
		c, err := s.runKey(e.ChildRunID)
		if err != nil {
			return err
		}
		child = c
	}
	_, err = s.exec(ctx, `INSERT INTO agent_events (run_id, step, kind, child_run_id, detail, tokens, remaining)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, run, e.Step, string(e.Kind), child, nullable(e.Detail),
		nullableInt(e.Tokens), nullableInt(e.Remaining))
	return err
}

// RecordContextEvent writes a context event. For an "assembled" turn, est is
// the assembler's estimate; the provider's count comes later through
// RecordContextReported.
func (s *Store) RecordContextEvent(ctx context.Context, runID string, step int, kind, detail string, est *int64) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO context_events (run_id, step, kind, detail, est_tokens, reported_tokens)
		VALUES (?, ?, ?, ?, ?, NULL)`, run, step, kind, nullable(detail), nullableInt(est))
	return err
}

// RecordContextReported fills in the provider-reported total on the step's
// assembled row. io-harness calls it only when the provider reported
// something, so an unreported turn keeps NULL.
func (s *Store) RecordContextReported(ctx context.Context, runID string, step int, reported int64) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, "UPDATE context_events SET reported_tokens = ? WHERE run_id = ? AND step = ? AND kind = 'assembled'",
		reported, run, step)
	return err
}

// RecordProviderCall writes one provider attempt (failed ones too). As in
// io-harness, usage is all or nothing: with TotalTokens nil every usage
// column is NULL ("not reported", not zero); with it set, the other usage
// counts are written too, zero where not given.
func (s *Store) RecordProviderCall(ctx context.Context, runID string, c store.ProviderCall) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	usage := []*int64{c.PromptTokens, c.CompletionTokens, c.TotalTokens, c.CacheReadTokens,
		c.CacheWriteTokens, c.ReasoningTokens, c.ServerToolCalls}
	cols := make([]any, len(usage))
	for i, u := range usage {
		switch {
		case c.TotalTokens == nil:
			cols[i] = nil
		case u == nil:
			cols[i] = int64(0)
		default:
			cols[i] = *u
		}
	}
	_, err = s.exec(ctx, `INSERT INTO provider_calls (run_id, step, attempt, provider, model, prompt_tokens,
		completion_tokens, total_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
		server_tool_requests, latency_ms, ttft_ms, finish_reason, failure)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		append(append([]any{run, c.Step, c.Attempt, c.Provider, nullable(c.Model)}, cols...),
			c.LatencyMS, nullableInt(c.TTFTMS), nullable(c.FinishReason), nullable(c.Failure))...)
	return err
}

// RecordEdit writes one file change a step made.
func (s *Store) RecordEdit(ctx context.Context, runID string, step int, e store.Edit) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed, hunk)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, run, step, e.Tool, e.Path, e.LinesAdded, e.LinesRemoved, nullable(e.Hunk))
	return err
}

// RecordObservations writes ledger entries in one transaction, each under
// its own step, as io-harness's record_observations does: persist_ledger
// writes everything observed since the last commit, and an entry keeps the
// step it was observed at (the seeded conversation is step 0, a recovery's
// observation the step its call was made at), not the step whose commit
// writes it.
func (s *Store) RecordObservations(ctx context.Context, runID string, obs []store.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for _, o := range obs {
			if _, err := tx.ExecContext(ctx, "INSERT INTO ledger_observations (run_id, step, kind, target, text) VALUES (?, ?, ?, ?, ?)",
				run, o.Step, o.Kind, nullable(o.Target), o.Text); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordEvent writes a sandbox or MCP event (Source "sandbox" or "mcp").
func (s *Store) RecordEvent(ctx context.Context, e Event) error {
	run, err := s.runKey(e.RunID)
	if err != nil {
		return err
	}
	switch e.Source {
	case "sandbox":
		_, err = s.exec(ctx, "INSERT INTO sandbox_events (run_id, step, kind, backend, detail) VALUES (?, ?, ?, ?, ?)",
			run, e.Step, e.Kind, nullable(e.Backend), nullable(e.Detail))
	case "mcp":
		_, err = s.exec(ctx, "INSERT INTO mcp_events (run_id, step, kind, server, tool, ok, millis, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			run, e.Step, e.Kind, e.Server, nullable(e.Tool), boolOrNull(e.OK), millisOrNull(e.Millis), nullable(e.Detail))
	case "checkpoint":
		return s.RecordCheckpointEvent(ctx, e.RunID, e.Step, e.Kind, e.Detail)
	default:
		return storeErr(s.path, store.ErrUnsupported, "unknown event source "+e.Source, nil)
	}
	return err
}

// millisOrNull is McpEvent.millis as io-harness binds it: an Option<u64>
// of whole milliseconds, NULL when there is none.
func millisOrNull(d *time.Duration) any {
	if d == nil {
		return nil
	}
	return int64(*d / time.Millisecond)
}

func boolOrNull(b *bool) any {
	switch {
	case b == nil:
		return nil
	case *b:
		return 1
	}
	return 0
}
