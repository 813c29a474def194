package starweaver

import (
	"context"
	"database/sql"
	"math"

	"github.com/vigil-run/vigil/store"
)

// A live run's counts.
//
// Starweaver writes a run's stream records only when a stretch of it
// commits (commit_run_evidence, one transaction with the run record), so
// while it runs the stream holds nothing of it. What lands meanwhile are
// its checkpoints: commit_checkpoint inserts one at each durable boundary,
// keyed by run_step (the sequence_no column), with the whole run state,
// whose usage is the run's accumulated usage so far; the same transaction
// moves the run record's updated_at. So a live run's steps are its highest
// checkpointed run_step and its tokens the newest checkpoint's
// state.usage.total_tokens. When the stretch commits, its stream holds the
// same turns: the stream's count takes over, never added to this one.

// checkpointPayloadPath is payloadPath for checkpoint records: the SQL twin
// of unwrap for the checkpoint schema.
const checkpointPayloadPath = `CASE WHEN json_valid(record) AND json_type(record) = 'object' THEN CASE
	WHEN json_type(record, '$.schema') IS NULL AND json_type(record, '$.version') IS NULL THEN '$'
	WHEN json_extract(record, '$.schema') = '` + schemaCheckpoint + `' AND json_type(record, '$.version') = 'integer'
		AND json_extract(record, '$.version') BETWEEN 0 AND 2 AND json_type(record, '$.payload') = 'object' THEN '$.payload'
	END END`

// checkpointCounts reads a run's count from its checkpoints: ok is false
// when it has none. Only the newest record is read, in SQL (a checkpoint
// holds the whole message history), picked by rowid from the key index
// first: ordering the rows by rowid would read every one.
func (s *Store) checkpointCounts(ctx context.Context, session, runID string) (a agg, ok bool, err error) {
	var steps, tokens sql.NullInt64
	err = s.eachRow(ctx, `SELECT (SELECT MAX(sequence_no) FROM checkpoint_records WHERE session_id = ? AND run_id = ?),
		(SELECT json_extract(record, `+checkpointPayloadPath+` || '.state.usage.total_tokens') FROM checkpoint_records
			WHERE rowid = (SELECT MAX(rowid) FROM checkpoint_records WHERE session_id = ? AND run_id = ?))`,
		[]any{session, runID, session, runID}, func(r *sql.Rows) error { return r.Scan(&steps, &tokens) })
	return agg{steps: int(steps.Int64), tokens: tokens.Int64}, steps.Valid, err
}

// wholeThrough is RunStats' Through for a count taken from checkpoints: it
// already holds the turns the run's stream rows will bring.
const wholeThrough = math.MaxInt64

// liveCount is a run's count up to a stream rowid, or, while its stream
// has no response of it (a live run), from its checkpoints; whole says the
// count came from checkpoints.
func (s *Store) liveCount(ctx context.Context, runID string, through int64) (agg, bool, error) {
	a, err := s.countRun(ctx, runID, through)
	if err != nil || a != (agg{}) {
		return a, false, err
	}
	m, ok, err := s.metaOf(ctx, runID)
	if err != nil || !ok {
		return a, false, err
	}
	c, ok, err := s.checkpointCounts(ctx, m.session, runID)
	if err != nil || !ok {
		return a, false, err
	}
	return c, true, nil
}

// countOpen gives an open run Changes re-sends its whole count as of now:
// a checkpoint landing moves the run record, so a live run is re-sent, and
// counted again, as each one lands; and the stream rows of a stretch come
// with the run record's own update, so they are in the count that
// replaces the reader's (CountsWhole), never added to it.
func (s *Store) countOpen(ctx context.Context, r *store.Run, through int64) error {
	a, _, err := s.liveCount(ctx, r.ID, through)
	if err != nil {
		return err
	}
	r.Steps, r.Tokens, r.StatsKnown, r.CountsWhole = a.steps, a.tokens, true, true
	if r.Provider == "" {
		r.Provider = a.provider
	}
	return nil
}
