package starweaver

import (
	"context"
	"database/sql"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The facts Starweaver records that vigil's contract names (store/facts.go)
// and where they come from:
//
//   - the token breakdown: a response's Usage carries cache_read_tokens and
//     cache_write_tokens beside input and output (no reasoning or
//     server-tool count), read into each provider call;
//   - server tools: a response's provider_tool_call parts, tools the
//     provider ran for the model (no error is recorded for them);
//   - checkpoints: checkpoint_records of the run; resumes: the continuations
//     that name it (restore_from_run_id), each a later run of its own.
//
// Citations, gates, memory, folds, plans, queues, messages, processes and a
// live event stream have no equivalent in a session database (its stream is
// what committed, not what happens inside a step): not recorded.

var (
	_ store.FactReader = (*Store)(nil)
	_ store.WriteClock = (*Store)(nil)
)

// serverTools are the provider_tool_call parts of a model response row:
// tools the provider ran for the model.
func serverTools(x streamRow, runID string, call *store.ProviderCall) []store.ServerToolCall {
	resp := x.rec.Event.Response
	if resp == nil {
		return nil
	}
	var out []store.ServerToolCall
	for _, p := range resp.Parts {
		if p.Kind == "provider_tool_call" && p.Call != nil {
			out = append(out, store.ServerToolCall{RowID: x.rowid, RunID: runID, Step: x.rec.Event.Step,
				Provider: call.Provider, Tool: p.Call.Name, At: call.At})
		}
	}
	return out
}

// RunFacts reads the run's checkpoints, its continuations and the tools
// the provider ran for it.
func (s *Store) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	m, err := s.mustMeta(ctx, runID)
	if err != nil {
		return store.RunFacts{}, err
	}
	f := store.RunFacts{RunID: runID, Recorded: store.FactSet{}}
	f.Recorded.Add(store.FactUsage, store.FactServerTools, store.FactCheckpoints)
	err = s.eachRow(ctx, "SELECT COUNT(*) FROM checkpoint_records WHERE session_id = ? AND run_id = ?", []any{m.session, runID},
		func(r *sql.Rows) error { return r.Scan(&f.Checkpoints) })
	if err != nil {
		return store.RunFacts{}, err
	}
	conts, err := s.queryRuns(ctx, "WHERE session_id = ? AND record LIKE ? ORDER BY rowid", m.session, `%"restore_from_run_id"%`+likeEscape(runID)+`%`)
	if err != nil {
		return store.RunFacts{}, err
	}
	for _, x := range conts {
		if x.rec.RestoreFromRunID == runID {
			f.Markers = append(f.Markers, store.Marker{Kind: "resume", Detail: "continued by " + x.rec.RunID})
		}
	}
	rows, err := s.timelineRows(ctx, runID)
	if err != nil {
		return store.RunFacts{}, err
	}
	var t tail
	for _, x := range rows {
		if _, call, ok := stepOf(x, runID, &t); ok && call != nil {
			f.ServerTools = append(f.ServerTools, serverTools(x, runID, call)...)
		}
	}
	return f, nil
}

// LastWrite is the newest time the database's records carry: session, run,
// approval and deferred-tool records' updated_at (rewritten in place), and
// the newest checkpoint's created_at. Stream records carry no time of their
// own; the run record they belong to is updated with them.
func (s *Store) LastWrite(ctx context.Context) (time.Time, error) {
	q := `SELECT MAX(updated_at) FROM session_records
UNION ALL SELECT MAX(updated_at) FROM run_records
UNION ALL SELECT MAX(updated_at) FROM approval_records
UNION ALL SELECT MAX(updated_at) FROM deferred_tool_records
UNION ALL SELECT (SELECT created_at FROM checkpoint_records ORDER BY rowid DESC LIMIT 1)`
	var last time.Time
	err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
		var v sql.NullString
		if err := r.Scan(&v); err != nil {
			return err
		}
		if t := parseTS(v.String); t.After(last) {
			last = t
		}
		return nil
	})
	return last, err
}
