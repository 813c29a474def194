package starweaver

import (
	"context"
	"database/sql"
	"sort"
	"strconv"

	"github.com/vigil-run/vigil/store"
)

// runRow is a decoded run_records row.
type runRow struct {
	rowid int64
	rec   runRec
	sig   string // what changes in place on the row: updated_at and the record's length
}

const runCols = "rowid, session_id, run_id, record, updated_at || '|' || length(record)"

// scanRun decodes a run row; ok is false for a record vigil cannot read
// (another schema, a newer envelope), which is skipped everywhere.
func scanRun(r *sql.Rows) (runRow, bool, error) {
	var x runRow
	var sess, id string
	var rec []byte
	if err := r.Scan(&x.rowid, &sess, &id, &rec, &x.sig); err != nil {
		return x, false, err
	}
	if !decode(rec, schemaRun, true, &x.rec) {
		return x, false, nil
	}
	// The key columns are the truth; a payload that disagrees is not
	// allowed to move the run elsewhere.
	x.rec.SessionID, x.rec.RunID = sess, id
	return x, true, nil
}

func (s *Store) queryRuns(ctx context.Context, where string, args ...any) ([]runRow, error) {
	var out []runRow
	err := s.eachRow(ctx, "SELECT "+runCols+" FROM run_records "+where, args, func(r *sql.Rows) error {
		x, ok, err := scanRun(r)
		if ok {
			out = append(out, x)
		}
		return err
	})
	return out, err
}

// sessions reads every session record.
func (s *Store) sessions(ctx context.Context) (map[string]*sessionRec, error) {
	out := map[string]*sessionRec{}
	err := s.eachRow(ctx, "SELECT session_id, record FROM session_records", nil, func(r *sql.Rows) error {
		var id string
		var rec []byte
		if err := r.Scan(&id, &rec); err != nil {
			return err
		}
		var sr sessionRec
		if decode(rec, schemaSession, true, &sr) {
			out[id] = &sr
		}
		return nil
	})
	return out, err
}

func (s *Store) session(ctx context.Context, id string) (*sessionRec, error) {
	var sr *sessionRec
	err := s.eachRow(ctx, "SELECT record FROM session_records WHERE session_id = ?", []any{id}, func(r *sql.Rows) error {
		var rec []byte
		if err := r.Scan(&rec); err != nil {
			return err
		}
		var x sessionRec
		if decode(rec, schemaSession, true, &x) {
			sr = &x
		}
		return nil
	})
	return sr, err
}

// agg is what a run's model responses add up to.
type agg struct {
	steps    int
	tokens   int64
	provider string
}

// payloadPath is, in SQL, the JSON path of a stream record's payload: '$'
// for a legacy bare value, '$.payload' inside an envelope of the stream
// schema and a version 0–2, NULL for a row unwrap would skip. It is the
// SQL twin of unwrap, so counts made here agree with the timeline.
const payloadPath = `CASE WHEN json_valid(record) AND json_type(record) = 'object' THEN CASE
	WHEN json_type(record, '$.schema') IS NULL AND json_type(record, '$.version') IS NULL THEN '$'
	WHEN json_extract(record, '$.schema') = '` + schemaStream + `' AND json_type(record, '$.version') = 'integer'
		AND json_extract(record, '$.version') BETWEEN 0 AND 2 AND json_type(record, '$.payload') = 'object' THEN '$.payload'
	END END`

// aggKey is the stream a group of responses came from: the row's run, and
// for a copy merged from a subagent, that subagent.
type aggKey struct {
	session, run string
	merged       bool
	src          string
}

// responseAggs adds up model responses in SQL (the records can be large:
// only the numbers leave the database), grouped by stream and source,
// records too big for SQL included (each read through the shrinker).
func (s *Store) responseAggs(ctx context.Context, through int64, where string, args ...any) (map[aggKey]agg, error) {
	out, err := s.smallAggs(ctx, through, where, args...)
	if err != nil {
		return nil, err
	}
	return out, s.addBigAggs(ctx, out, through, where, args...)
}

// smallAggs is responseAggs of the records SQL is handed (bigRecord bytes
// at most).
func (s *Store) smallAggs(ctx context.Context, through int64, where string, args ...any) (map[aggKey]agg, error) {
	q := `SELECT session_id, run_id, merged, src,
		COALESCE(MAX(step), 0), COALESCE(SUM(tokens), 0), COALESCE(MAX(provider), '')
	FROM (SELECT session_id, run_id,
			COALESCE(json_type(record, p || '.source') = 'object', 0) AS merged,
			COALESCE(json_extract(record, p || '.source.run_id'), '') AS src,
			CAST(json_extract(record, p || '.event.step') AS INTEGER) AS step,
			COALESCE(CAST(json_extract(record, p || '.event.response.usage.total_tokens') AS INTEGER), 0) AS tokens,
			json_extract(record, p || '.event.response.provider.name') AS provider
		FROM (SELECT session_id, run_id, record, (` + payloadPath + `) AS p FROM stream_records
			WHERE rowid <= ? AND octet_length(record) <= ` + strconv.Itoa(bigRecord) + ` AND record LIKE '%"model_response"%' ` + where + `)
		WHERE p IS NOT NULL AND json_extract(record, p || '.event.kind') = 'model_response')
	GROUP BY session_id, run_id, merged, src`
	out := map[aggKey]agg{}
	err := s.eachRow(ctx, q, append([]any{through}, args...), func(r *sql.Rows) error {
		var k aggKey
		var a agg
		if err := r.Scan(&k.session, &k.run, &k.merged, &k.src, &a.steps, &a.tokens, &a.provider); err != nil {
			return err
		}
		out[k] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addBigAggs adds to out the model responses of records too big to hand
// to SQL, from their shrunk form.
func (s *Store) addBigAggs(ctx context.Context, out map[aggKey]agg, through int64, where string, args ...any) error {
	big, err := s.streamRows(ctx, "WHERE rowid <= ? AND octet_length(record) > "+strconv.Itoa(bigRecord)+" "+where, append([]any{through}, args...)...)
	if err != nil {
		return err
	}
	for _, x := range big {
		ev := &x.rec.Event
		if ev.Kind != "model_response" {
			continue
		}
		k := aggKey{session: x.session, run: x.run}
		k.merged, k.src = x.rec.source()
		a := out[k]
		a.steps = max(a.steps, ev.Step)
		if r := ev.Response; r != nil {
			if r.Usage != nil && r.Usage.TotalTokens != nil {
				a.tokens += *r.Usage.TotalTokens
			}
			if r.Provider != nil && r.Provider.Name > a.provider {
				a.provider = r.Provider.Name
			}
		}
		out[k] = a
	}
	return nil
}

// bigStreams is the runs whose streams hold a record too big to hand to
// SQL, up to a stream rowid: the record is not read (octet_length comes
// from the row's header).
func (s *Store) bigStreams(ctx context.Context, through int64) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.eachRow(ctx, "SELECT DISTINCT run_id FROM stream_records WHERE rowid <= ? AND octet_length(record) > "+strconv.Itoa(bigRecord),
		[]any{through}, func(r *sql.Rows) error {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			out[id] = true
			return nil
		})
	return out, err
}

// attribute folds response groups onto the runs they belong to: a run's
// own rows, plus copies merged into a parent's stream from a subagent that
// has no stream of its own.
func (s *Store) attribute(ctx context.Context, groups map[aggKey]agg) (map[string]agg, error) {
	out := map[string]agg{}
	add := func(run string, a agg) {
		x := out[run]
		x.steps = max(x.steps, a.steps)
		x.tokens += a.tokens
		if x.provider == "" {
			x.provider = a.provider
		}
		out[run] = x
	}
	for k, a := range groups {
		if !k.merged || k.src == k.run {
			add(k.run, a)
		}
	}
	for k, a := range groups {
		if !k.merged || k.src == k.run || k.src == "" {
			continue
		}
		own, err := s.hasOwnStream(ctx, k.src)
		if err != nil {
			return nil, err
		}
		if !own {
			add(k.src, a)
		}
	}
	return out, nil
}

// hasOwnStream reports whether a run has stream rows of its own.
func (s *Store) hasOwnStream(ctx context.Context, runID string) (bool, error) {
	m, ok, err := s.metaOf(ctx, runID)
	if err != nil || !ok {
		return false, err
	}
	n := 0
	err = s.eachRow(ctx, "SELECT 1 FROM stream_records WHERE session_id = ? AND run_id = ? LIMIT 1", []any{m.session, runID},
		func(r *sql.Rows) error { n++; return nil })
	return n > 0, err
}

// streamTop is the highest stream rowid now.
func (s *Store) streamTop(ctx context.Context) (int64, error) {
	var top int64
	err := s.eachRow(ctx, "SELECT COALESCE(MAX(rowid), 0) FROM stream_records", nil, func(r *sql.Rows) error { return r.Scan(&top) })
	return top, err
}

// runFacts is what mapping a run needs beyond its record.
type runFacts struct {
	session     *sessionRec
	continuedBy string // the run that continues this one (restore_from_run_id), if any
	depth       int
	stats       *agg // counted responses (finished runs)
	uncounted   bool // stats lack a record too big for SQL: the counts are RunStats'
}

// bigCounts reports a run whose counts a big record may change: one in
// its own stream, or in its parent's, where a subagent's records are
// merged (attribute; countRun looks there too).
func bigCounts(rr runRec, big map[string]bool) bool {
	return big[rr.RunID] || (rr.ParentRunID != "" && big[rr.ParentRunID])
}

// mapStatus reads a Starweaver status as vigil's shared state logic
// (store.StateOf) understands it. Active runs are running (no lease says
// more); a waiting run is paused until a resume picks it up, and finished
// once a continuation has (0.7's CLI resume never moves the source run off
// waiting); completed and cancelled runs are completed with that outcome.
func mapStatus(status, continuedBy string) (st store.Status, outcome store.Outcome, finished bool) {
	switch status {
	case "queued", "starting", "running":
		return store.StatusRunning, "", false
	case "waiting":
		if continuedBy != "" {
			return store.StatusCompleted, store.OutcomeContinued, true
		}
		return store.StatusPaused, "", false
	case "completed":
		return store.StatusCompleted, store.OutcomeFinished, true
	case "failed":
		return store.StatusFailed, store.OutcomeFailed, true
	case "cancelled":
		return store.StatusCompleted, store.OutcomeCancelled, true
	}
	return store.Status(status), "", false // a status from a newer Starweaver: shown as it is
}

func mapRun(x runRow, f runFacts) store.Run {
	rr := x.rec
	r := store.Run{
		ID:        rr.RunID,
		ParentID:  rr.ParentRunID,
		Depth:     f.depth,
		Goal:      rr.prompt(),
		TurnKind:  rr.TriggerType,
		StartedAt: parseTS(rr.CreatedAt),
	}
	if rr.RestoreFromRunID != "" {
		r.TurnKind = "continuation"
	}
	if f.session != nil {
		r.Workspace = f.session.workspace()
		if r.Goal == "" {
			r.Goal = f.session.Title
		}
	}
	var finished bool
	r.Status, r.Outcome, finished = mapStatus(rr.Status, f.continuedBy)
	if f.stats != nil {
		r.Provider = f.stats.provider
	}
	if finished && f.stats != nil {
		end := parseTS(rr.UpdatedAt)
		sum := &store.Summary{
			Outcome:    r.Outcome,
			Success:    rr.Status == "completed",
			Steps:      f.stats.steps,
			Tokens:     f.stats.tokens,
			FinishedAt: end,
		}
		if !r.StartedAt.IsZero() && !end.IsZero() && !end.Before(r.StartedAt) {
			sum.Duration, sum.HasDuration = end.Sub(r.StartedAt), true
		}
		if f.uncounted {
			// Not a partial sum: unknown until RunStats (runmodel's
			// ApplyStats fills the summary in too).
			sum.Steps, sum.Tokens = 0, 0
		}
		r.Summary = sum
		r.Steps, r.Tokens, r.StatsKnown = sum.Steps, sum.Tokens, !f.uncounted
	}
	return r
}

// open reports a run whose row can still change: active, or waiting with
// no continuation yet.
func openRun(x runRow, continuedBy string) bool {
	_, _, finished := mapStatus(x.rec.Status, continuedBy)
	return !finished
}

// Runs returns every run of every live session, newest first: roots,
// continuations (roots of their own) and subagents (children of the run
// that delegated them). Finished runs carry their counts in a summary;
// the others are counted by RunStats.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	sessions, err := s.sessions(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryRuns(ctx, "")
	if err != nil {
		return nil, err
	}
	rows = liveRows(rows, sessions)
	s.remember(rows, true)
	if err := s.loadClaims(ctx); err != nil {
		return nil, err
	}
	cont := continuations(rows)
	top, err := s.streamTop(ctx)
	if err != nil {
		return nil, err
	}
	// Records too big for SQL are not read here: the runs whose counts
	// they could change are left uncounted, for RunStats (the explorer
	// draws them with "…" and fills the counts in after).
	groups, err := s.smallAggs(ctx, top, "")
	if err != nil {
		return nil, err
	}
	big, err := s.bigStreams(ctx, top)
	if err != nil {
		return nil, err
	}
	stats, err := s.attribute(ctx, groups)
	if err != nil {
		return nil, err
	}
	parents := map[string]string{}
	for _, x := range rows {
		parents[x.rec.RunID] = x.rec.ParentRunID
	}
	out := make([]store.Run, 0, len(rows))
	for _, x := range rows {
		st := stats[x.rec.RunID]
		out = append(out, mapRun(x, runFacts{
			session: sessions[x.rec.SessionID], continuedBy: cont[x.rec.RunID],
			depth: depth(x.rec.RunID, parents), stats: &st,
			uncounted: bigCounts(x.rec, big),
		}))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// liveRows drops the runs of sessions 0.15 has deleted.
func liveRows(rows []runRow, sessions map[string]*sessionRec) []runRow {
	out := rows[:0]
	for _, x := range rows {
		if sr := sessions[x.rec.SessionID]; sr != nil && sr.deleted() {
			continue
		}
		out = append(out, x)
	}
	return out
}

// continuations maps each continued run to the (first) run continuing it.
func continuations(rows []runRow) map[string]string {
	out := map[string]string{}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].rowid < rows[j].rowid })
	for _, x := range rows {
		if src := x.rec.RestoreFromRunID; src != "" {
			if _, ok := out[src]; !ok {
				out[src] = x.rec.RunID
			}
		}
	}
	return out
}

// depth is a run's distance from its root along parent_run_id.
func depth(id string, parents map[string]string) int {
	d := 0
	seen := map[string]bool{id: true}
	for p := parents[id]; p != "" && !seen[p]; p = parents[p] {
		if _, ok := parents[p]; !ok {
			break
		}
		seen[p] = true
		d++
	}
	return d
}

// remember records where runs live; all says rows is every run.
func (s *Store) remember(rows []runRow, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if all {
		s.meta = make(map[string]runMeta, len(rows))
	}
	for _, x := range rows {
		s.meta[x.rec.RunID] = runMeta{session: x.rec.SessionID, parent: x.rec.ParentRunID}
	}
}

// metaOf is where a run lives, from what the last reads learned or, for a
// run not seen yet, from the database.
func (s *Store) metaOf(ctx context.Context, runID string) (runMeta, bool, error) {
	s.mu.Lock()
	m, ok := s.meta[runID]
	s.mu.Unlock()
	if ok {
		return m, true, nil
	}
	rows, err := s.queryRuns(ctx, "WHERE run_id = ?", runID)
	if err != nil || len(rows) == 0 {
		return runMeta{}, false, err
	}
	s.remember(rows[:1], false)
	return runMeta{session: rows[0].rec.SessionID, parent: rows[0].rec.ParentRunID}, true, nil
}

func (s *Store) mustMeta(ctx context.Context, runID string) (runMeta, error) {
	m, ok, err := s.metaOf(ctx, runID)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, errf(s.path, store.ErrNoSuchRun, nil, "no such run: %s", runID)
	}
	return m, nil
}

// ancestry is the chain of run ids from the root down to id; a parent
// that is not in the store ends it.
func (s *Store) ancestry(ctx context.Context, id string) ([]string, error) {
	parents := map[string]string{}
	seen := map[string]bool{}
	for cur := id; cur != "" && !seen[cur]; {
		seen[cur] = true
		m, ok, err := s.metaOf(ctx, cur)
		if err != nil {
			return nil, err
		}
		if !ok || m.parent == "" {
			break
		}
		if _, ok, err := s.metaOf(ctx, m.parent); err != nil {
			return nil, err
		} else if !ok {
			break
		}
		parents[cur] = m.parent
		cur = m.parent
	}
	return store.Ancestry(id, parents), nil
}

// runsByID reads runs by id (each a point read on the primary key) and
// maps them, counting the finished ones.
func (s *Store) runsByID(ctx context.Context, ids []string) ([]store.Run, []runRow, error) {
	var rows []runRow
	for _, id := range ids {
		m, ok, err := s.metaOf(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		rs, err := s.queryRuns(ctx, "WHERE session_id = ? AND run_id = ?", m.session, id)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, rs...)
	}
	runs, err := s.mapRows(ctx, rows)
	return runs, rows, err
}

// mapRows maps run rows read on their own (not as part of Runs): each one's
// session, continuation, depth and, when finished, its counts.
func (s *Store) mapRows(ctx context.Context, rows []runRow) ([]store.Run, error) {
	s.remember(rows, false)
	out := make([]store.Run, 0, len(rows))
	for _, x := range rows {
		sr, err := s.session(ctx, x.rec.SessionID)
		if err != nil {
			return nil, err
		}
		if sr != nil && sr.deleted() {
			continue
		}
		cont, err := s.continuationOf(ctx, x.rec.SessionID, x.rec.RunID)
		if err != nil {
			return nil, err
		}
		chain, err := s.ancestry(ctx, x.rec.RunID)
		if err != nil {
			return nil, err
		}
		f := runFacts{session: sr, continuedBy: cont, depth: len(chain) - 1}
		if _, _, finished := mapStatus(x.rec.Status, cont); finished {
			st, err := s.countRun(ctx, x.rec.RunID, 1<<62)
			if err != nil {
				return nil, err
			}
			f.stats = &st
		}
		out = append(out, mapRun(x, f))
	}
	return out, nil
}

// continuationOf is the run that continues runID in its session, if any.
func (s *Store) continuationOf(ctx context.Context, session, runID string) (string, error) {
	rows, err := s.queryRuns(ctx, "WHERE session_id = ? AND record LIKE ? ORDER BY rowid", session, `%"restore_from_run_id"%`+likeEscape(runID)+`%`)
	if err != nil {
		return "", err
	}
	for _, x := range rows {
		if x.rec.RestoreFromRunID == runID {
			return x.rec.RunID, nil
		}
	}
	return "", nil
}

// likeEscape keeps LIKE wildcards in an id literal (ids have none, but a
// damaged file might).
func likeEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '_' {
			out = append(out, '_') // '_' matches the character itself too
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

// countRun adds up one run's responses up to a stream rowid.
func (s *Store) countRun(ctx context.Context, runID string, through int64) (agg, error) {
	m, ok, err := s.metaOf(ctx, runID)
	if err != nil || !ok {
		return agg{}, err
	}
	groups, err := s.responseAggs(ctx, through, "AND session_id = ? AND run_id = ?", m.session, runID)
	if err != nil {
		return agg{}, err
	}
	if len(groups) == 0 && m.parent != "" {
		own, err := s.hasOwnStream(ctx, runID)
		if err != nil {
			return agg{}, err
		}
		if !own {
			pm, ok, err := s.metaOf(ctx, m.parent)
			if err != nil {
				return agg{}, err
			}
			if ok {
				groups, err = s.responseAggs(ctx, through, "AND session_id = ? AND run_id = ? AND record LIKE ?",
					pm.session, m.parent, "%"+likeEscape(runID)+"%")
				if err != nil {
					return agg{}, err
				}
			}
		}
	}
	var a agg
	for k, g := range groups {
		if (k.run == runID && (!k.merged || k.src == runID)) || (k.run != runID && k.src == runID) {
			a.steps = max(a.steps, g.steps)
			a.tokens += g.tokens
			if a.provider == "" {
				a.provider = g.provider
			}
		}
	}
	return a, nil
}

// RunStats counts the steps (the highest model turn) and tokens (the sum
// of each response's total_tokens) of runs, up to the stream rowid in
// Through: rows Changes brings above it are the reader's to add.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	through, err := s.streamTop(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.RunStats, len(ids))
	for _, id := range ids {
		a, whole, err := s.liveCount(ctx, id, through)
		if err != nil {
			return nil, err
		}
		st := store.RunStats{Steps: a.steps, Tokens: a.tokens, Through: through, Provider: a.provider}
		if whole {
			st.Through = wholeThrough
		}
		out[id] = st
	}
	return out, nil
}
