package opencode

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// runCols reads a session with what its status needs: its last message
// (message_session_time_created_id_idx finds it) and its count of
// assistant messages (one per model call). A message whose data is not
// JSON is not counted and does not stop the read.
const runCols = statusCols + `,
	(SELECT count(*) FROM message m WHERE m.session_id = s.id AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'assistant')`

// statusCols is runCols without the count, which reads the data of every
// message of the session: enough to tell whether a session has ended.
const statusCols = `s.rowid, s.id, COALESCE(s.parent_id, ''), s.title, s.directory, s.time_created, s.time_updated,
	COALESCE(s.model, ''),
	(SELECT data FROM message m WHERE m.session_id = s.id ORDER BY m.time_created DESC, m.id DESC LIMIT 1),
	(SELECT id FROM message m WHERE m.session_id = s.id ORDER BY m.time_created DESC, m.id DESC LIMIT 1),
	s.tokens_input + s.tokens_output + s.tokens_reasoning + s.tokens_cache_read + s.tokens_cache_write`

// The windows of Runs' short reads, in rowids.
const (
	sessionWindow = 256
	messageWindow = 1024
)

// windowEnd is the rowid that ends a window of n rows of table after
// from (at most top): the rows' own rowids, however sparse.
func (s *Store) windowEnd(ctx context.Context, table string, from int64, n int, top int64) (int64, error) {
	end := top
	err := s.eachRow(ctx, "SELECT rowid FROM "+table+" WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?", []any{from, n - 1},
		func(r *sql.Rows) error { return r.Scan(&end) })
	return min(end, top), err
}

// session is one session row as Runs reads it.
type session struct {
	rowid   int64
	run     store.Run
	updated int64
}

func (s *Store) querySessions(ctx context.Context, where string, args ...any) ([]session, error) {
	return s.readSessions(ctx, true, where, args...)
}

// sessionStates reads sessions without their counts (statusCols): their
// status is exact, their Steps and Summary.Steps are not counted.
func (s *Store) sessionStates(ctx context.Context, where string, args ...any) ([]session, error) {
	return s.readSessions(ctx, false, where, args...)
}

// changedSessions reads sessions for Changes: a running one is sent
// uncounted (its turns come through Changes), so only an ended one's
// summary is counted, read again whole.
func (s *Store) changedSessions(ctx context.Context, where string, args ...any) ([]session, error) {
	rows, err := s.sessionStates(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	for i, x := range rows {
		if !x.run.Status.Ended() {
			continue
		}
		again, err := s.querySessions(ctx, "WHERE s.rowid = ?", x.rowid)
		if err != nil {
			return nil, err
		}
		if len(again) == 1 {
			rows[i] = again[0]
		}
	}
	return rows, nil
}

func (s *Store) readSessions(ctx context.Context, counted bool, where string, args ...any) ([]session, error) {
	var out []session
	if !strings.Contains(where, "ORDER BY") {
		where += " ORDER BY s.time_created, s.id"
	}
	cols := statusCols
	if counted {
		cols = runCols
	}
	err := s.eachRow(ctx, "SELECT "+cols+" FROM session s "+where, args, func(r *sql.Rows) error {
		var x session
		var created int64
		var model string
		var last []byte
		var lastID sql.NullString
		var steps, tok int64
		dest := []any{&x.rowid, &x.run.ID, &x.run.ParentID, &x.run.Goal, &x.run.Workspace, &created, &x.updated, &model, &last, &lastID, &tok}
		if counted {
			dest = append(dest, &steps)
		}
		if err := r.Scan(dest...); err != nil {
			return err
		}
		x.run.StartedAt = millis(created)
		var m struct {
			ProviderID string `json:"providerID"`
		}
		if json.Unmarshal([]byte(model), &m) == nil {
			x.run.Provider = m.ProviderID
		}
		var msg *message
		if last != nil {
			if d, err := decodeMessage(last); err != nil {
				s.problem("message", lastID.String, 0, err)
			} else {
				msg = &d
				if d.ProviderID != "" {
					x.run.Provider = d.ProviderID
				}
			}
		}
		x.run.Steps, x.run.Tokens, x.run.StatsKnown = int(steps), tok, true
		setStatus(&x.run, msg, created)
		out = append(out, x)
		return nil
	})
	return out, err
}

// setStatus reads a session's state from its last message, as opencode's
// prompt loop decides whether to go on (SessionPrompt.loop: it stops at an
// assistant message that finished for a reason other than tool calls).
//
//	last message                               Status     Outcome
//	none, a user prompt, an unfinished reply   running    ""
//	a finished reply whose finish is tool-calls running   ""  (the loop calls the model again)
//	a reply with MessageAbortedError           completed  cancelled
//	a reply with any other error               failed     failed
//	a finished reply                           completed  finished
func setStatus(r *store.Run, m *message, created int64) {
	r.Status = store.StatusRunning
	if m == nil || m.Role != "assistant" {
		return
	}
	switch {
	case m.Error != nil && m.Error.Name == "MessageAbortedError":
		r.Status, r.Outcome = store.StatusCompleted, store.OutcomeCancelled
	case m.Error != nil:
		r.Status, r.Outcome = store.StatusFailed, store.OutcomeFailed
	case m.Time.Completed == 0 || m.Finish == "tool-calls" || m.Finish == "unknown" || m.Finish == "":
		return
	default:
		r.Status, r.Outcome = store.StatusCompleted, store.OutcomeFinished
	}
	end := m.Time.Completed
	if end == 0 {
		end = m.Time.Created
	}
	r.Summary = &store.Summary{Outcome: r.Outcome, Success: r.Outcome.Succeeded(), Steps: r.Steps, Tokens: r.Tokens,
		FinishedAt: millis(end)}
	if end >= created && created > 0 {
		r.Summary.Duration, r.Summary.HasDuration = millis(end).Sub(millis(created)), true
	}
}

// Runs lists every session, a sub-agent's under its parent (parent_id).
// A finished session carries its counts in its summary; an unfinished
// one's are left to RunStats, which says which rows they include.
//
// Counting model calls reads the data of every message in the file, so
// Runs reads in short reads (a window of sessions, then of messages, by
// rowid, up to the tops it read first), each closed before the next:
// opencode's checkpoints and a refresh's reads go on in between.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	tops, _, err := sqlitex.Tops(ctx, &s.stmts, s.read, "rowid", tailed, "")
	if err != nil {
		return nil, sqlitex.MapErr(s.path, err)
	}
	var rows []session
	for from := int64(math.MinInt64); from < tops["session"]; {
		to, err := s.windowEnd(ctx, "session", from, sessionWindow, tops["session"])
		if err != nil {
			return nil, err
		}
		page, err := s.sessionStates(ctx, "WHERE s.rowid > ? AND s.rowid <= ?", from, to)
		if err != nil {
			return nil, err
		}
		rows, from = append(rows, page...), to
	}
	calls := map[string]int{}
	for from := int64(math.MinInt64); from < tops["message"]; {
		to, err := s.windowEnd(ctx, "message", from, messageWindow, tops["message"])
		if err != nil {
			return nil, err
		}
		err = s.eachRow(ctx, `SELECT session_id, count(*) FROM message WHERE rowid > ? AND rowid <= ?
			AND json_valid(data) AND json_extract(data, '$.role') = 'assistant' GROUP BY session_id`,
			[]any{from, to}, func(r *sql.Rows) error {
				var id string
				var n int
				err := r.Scan(&id, &n)
				calls[id] += n
				return err
			})
		if err != nil {
			return nil, err
		}
		from = to
	}
	for i := range rows {
		r := &rows[i].run
		r.Steps = calls[r.ID]
		if r.Summary != nil {
			r.Summary.Steps = r.Steps
		}
	}
	// The list's order, as one read's ORDER BY s.time_created, s.id.
	slices.SortStableFunc(rows, func(a, b session) int {
		return cmp.Or(a.run.StartedAt.Compare(b.run.StartedAt), cmp.Compare(a.run.ID, b.run.ID))
	})
	runs := withDepth(rows)
	for i := range runs {
		uncounted(&runs[i])
	}
	return runs, nil
}

// uncounted leaves an unfinished run's counts to RunStats.
func uncounted(r *store.Run) {
	if r.Summary == nil {
		r.Steps, r.Tokens, r.StatsKnown = 0, 0, false
	}
}

// withDepth sets each run's depth: the parents present in the file.
func withDepth(rows []session) []store.Run {
	parent := map[string]string{}
	for _, x := range rows {
		parent[x.run.ID] = x.run.ParentID
	}
	out := make([]store.Run, 0, len(rows))
	for _, x := range rows {
		d, p := 0, x.run.ParentID
		for seen := 0; p != "" && seen < len(rows); seen++ {
			if _, ok := parent[p]; !ok {
				break
			}
			d, p = d+1, parent[p]
		}
		x.run.Depth = d
		out = append(out, x.run)
	}
	return out
}

// RunStats counts the sessions' model calls and the tokens the provider
// reported for them, from their step-finish parts (records.go: tokens).
// Through is the last row id made from the last step-finish counted: a
// turn's row ids are made from its newest part, so the turns after it come
// through Changes with higher row ids, and one already counted with a
// lower one.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	out := map[string]store.RunStats{}
	for _, id := range ids {
		var st store.RunStats
		var found bool
		err := s.eachRow(ctx, `SELECT COALESCE(max(rowid), 0), count(DISTINCT message_id), COALESCE(sum(COALESCE(json_extract(data, '$.tokens.total'),
			json_extract(data, '$.tokens.input') + json_extract(data, '$.tokens.output') + json_extract(data, '$.tokens.reasoning')
			+ json_extract(data, '$.tokens.cache.read') + json_extract(data, '$.tokens.cache.write'))), 0),
			EXISTS (SELECT 1 FROM session WHERE id = ?)
			FROM part WHERE session_id = ? AND json_valid(data) AND json_extract(data, '$.type') = 'step-finish'`,
			[]any{id, id}, func(r *sql.Rows) error { return r.Scan(&st.Through, &st.Steps, &st.Tokens, &found) })
		if err != nil {
			return nil, err
		}
		if found {
			if st.Through > 0 { // every row id made from that part or an older one
				st.Through = rowID(st.Through, 1<<idShift-1)
			}
			out[id] = st
		}
	}
	return out, nil
}

// AgentEvents are the sub-agent sessions: a spawn on the parent naming the
// child, at the child's session row.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	want := map[string]bool{}
	for _, id := range runIDs {
		want[id] = true
	}
	var out []store.AgentEvent
	err := s.eachRow(ctx, "SELECT rowid, id, parent_id, title FROM session WHERE parent_id IS NOT NULL ORDER BY rowid", nil, func(r *sql.Rows) error {
		var e store.AgentEvent
		var title string
		if err := r.Scan(&e.RowID, &e.ChildRunID, &e.RunID, &title); err != nil {
			return err
		}
		if len(want) == 0 || want[e.RunID] {
			e.Kind, e.Detail = store.AgentSpawn, title
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// depth counts the parents of a session present in the file (point reads
// up the parent_id chain).
func (s *Store) depth(ctx context.Context, parent string) (int, error) {
	d := 0
	for seen := map[string]bool{}; parent != "" && !seen[parent]; d++ {
		seen[parent] = true
		next, found := "", false
		err := s.eachRow(ctx, "SELECT COALESCE(parent_id, '') FROM session WHERE id = ?", []any{parent}, func(r *sql.Rows) error {
			found = true
			return r.Scan(&next)
		})
		if err != nil || !found {
			return d, err
		}
		parent = next
	}
	return d, nil
}
