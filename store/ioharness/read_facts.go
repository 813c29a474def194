package ioharness

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// The facts io-harness records beyond steps, requests and context samples
// (store/facts.go), each from the table io-harness writes it to and only
// when the store has that table: a store older than the release that added
// it says so (Recorded), it is not an error.
//
//	table (since)                   fact
//	provider_calls (0.18)           the token breakdown (cache, reasoning, server tools)
//	checkpoint_events (0.7)         checkpoints, resumes, skipped steps
//	sandbox_events (0.6)            gate failures by phase (kind gate_phase_failed), sandbox audit
//	gate_attempts (0.34)            each gate evaluation
//	memory (0.10), memory_recalls (0.30)  what the run wrote to and drew on from memory
//	context_events (0.10)           the assembler's events other than 'assembled'
//	mcp_events (0.8)                MCP audit
//	citations, server_tool_calls (0.22)
//	summaries (0.43)                compaction folds
//	todos (0.21), agent_queue (0.32), agent_messages (0.60),
//	process_handles, handle_output (0.25)
//	run_events (0.33)               the Broadcast stream
//
// Tables io-harness indexes by run (every one from 0.21 on, and
// provider_calls from 0.37) are read by run_id; the others through the
// run's row bounds (rows.go), as the timeline is.

var (
	_ store.FactReader     = (*Store)(nil)
	_ store.ActivityReader = (*Store)(nil)
	_ store.DetailReader   = (*Store)(nil)
	_ store.WriteClock     = (*Store)(nil)
)

// RunFacts reads everything io-harness records about one run beyond its
// steps, requests and context samples.
func (s *Store) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return store.RunFacts{}, err
	}
	si := s.si()
	f := store.RunFacts{RunID: runID, Recorded: store.FactSet{}}
	if si.has("provider_calls") {
		f.Recorded.Add(store.FactUsage)
	}
	type part struct {
		table string
		facts []store.Fact
		read  func() error
	}
	parts := []part{
		{"checkpoint_events", []store.Fact{store.FactCheckpoints}, func() error { return s.factCheckpoints(ctx, run, &f) }},
		{"sandbox_events", []store.Fact{store.FactGates, store.FactSandbox}, func() error { return s.factSandbox(ctx, run, &f) }},
		{"gate_attempts", []store.Fact{store.FactGateAttempts}, func() error { return s.factGateAttempts(ctx, run, &f) }},
		{"memory", []store.Fact{store.FactMemory}, func() error { return s.factMemory(ctx, run, &f) }},
		{"context_events", []store.Fact{store.FactContextEvents}, func() error { return s.factContextEvents(ctx, run, &f) }},
		{"mcp_events", []store.Fact{store.FactMCP}, func() error { return s.factMCP(ctx, run, &f) }},
		{"citations", []store.Fact{store.FactCitations}, func() (err error) {
			f.Citations, err = s.citations(ctx, run, allSteps)
			return err
		}},
		{"server_tool_calls", []store.Fact{store.FactServerTools}, func() (err error) {
			f.ServerTools, err = s.serverTools(ctx, run, allSteps)
			return err
		}},
		{"summaries", []store.Fact{store.FactFolds}, func() error { return s.factFolds(ctx, run, &f) }},
		{"todos", []store.Fact{store.FactTodos}, func() (err error) {
			var m map[string][]store.Todo
			m, err = s.todos(ctx, []int64{run})
			f.Todos = m[runID]
			return err
		}},
		{"agent_queue", []store.Fact{store.FactQueue}, func() (err error) {
			var m map[string][]store.QueuedAgent
			m, err = s.queued(ctx, []int64{run})
			f.Queued = m[runID]
			return err
		}},
		{"agent_messages", []store.Fact{store.FactMessages}, func() (err error) {
			var m map[string][]store.AgentMessage
			m, err = s.messages(ctx, []int64{run}, false)
			f.Messages = m[runID]
			return err
		}},
		{"run_events", []store.Fact{store.FactRunEvents}, func() error {
			if err := s.eachRow(ctx, "SELECT COUNT(*) FROM run_events WHERE run_id = ?", []any{run}, func(r *sql.Rows) error {
				return r.Scan(&f.Stream)
			}); err != nil {
				return err
			}
			evs, err := s.runEvents(ctx, run, 0, math.MaxInt64, 1)
			if len(evs) > 0 {
				f.LastEvent = &evs[0]
			}
			return err
		}},
		{"process_handles", []store.Fact{store.FactProcesses}, func() (err error) {
			var m map[string][]store.Process
			m, err = s.processes(ctx, []int64{run}, false)
			f.Processes = m[runID]
			return err
		}},
	}
	for _, p := range parts {
		if !si.has(p.table) {
			continue
		}
		if err := p.read(); err != nil {
			return store.RunFacts{}, mapDriverErr(s.path, err)
		}
		f.Recorded.Add(p.facts...)
	}
	sort.SliceStable(f.Audit, func(i, j int) bool { return f.Audit[i].Step < f.Audit[j].Step })
	return f, nil
}

// factCheckpoints counts checkpoint_events (record_checkpoint_event and
// the step commit's own row): kind checkpoint, resume or skipped.
func (s *Store) factCheckpoints(ctx context.Context, run int64, f *store.RunFacts) error {
	_, err := readRuns(ctx, s, runSpec{table: "checkpoint_events", cols: "kind, detail", runs: []int64{run}},
		func(r *sql.Rows) (struct{}, error) {
			var id, rn int64
			var m store.Marker
			var detail sql.NullString
			err := r.Scan(&id, &rn, &m.Step, &m.Kind, &detail)
			m.Detail = detail.String
			if m.Kind == "checkpoint" {
				f.Checkpoints++
			} else {
				f.Markers = append(f.Markers, m)
			}
			return struct{}{}, err
		})
	return err
}

// factSandbox reads the run's sandbox_events: its audit, and the gate
// failures among them tallied by phase the way io-harness's
// gate_failures_by_phase does (per event, a NULL phase as "(none)").
func (s *Store) factSandbox(ctx context.Context, run int64, f *store.RunFacts) error {
	evs, err := readRuns(ctx, s, runSpec{table: "sandbox_events", cols: "kind, detail, backend", runs: []int64{run}},
		func(r *sql.Rows) (store.AuditEvent, error) {
			e := store.AuditEvent{Source: "sandbox"}
			var rn int64
			var detail, backend sql.NullString
			err := r.Scan(&e.RowID, &rn, &e.Step, &e.Kind, &detail, &backend)
			e.RunID, e.Detail, e.Backend = idStr(rn), detail.String, backend.String
			return e, err
		})
	if err != nil {
		return err
	}
	by := map[string]int{}
	for _, e := range evs {
		if e.Kind != "gate_phase_failed" {
			continue
		}
		phase := e.Detail
		if phase == "" {
			phase = "(none)"
		}
		by[phase]++
	}
	for k, n := range by {
		f.GateFailures = append(f.GateFailures, store.Tally{Key: k, Count: n})
	}
	sort.Slice(f.GateFailures, func(i, j int) bool { return f.GateFailures[i].Key < f.GateFailures[j].Key })
	f.Audit = append(f.Audit, evs...)
	return nil
}

func (s *Store) factMCP(ctx context.Context, run int64, f *store.RunFacts) error {
	evs, err := readRuns(ctx, s, runSpec{table: "mcp_events", cols: "kind, detail, server, tool, ok, millis", runs: []int64{run}},
		func(r *sql.Rows) (store.AuditEvent, error) {
			e := store.AuditEvent{Source: "mcp"}
			var rn int64
			var detail, server, tool sql.NullString
			var ok, millis sql.NullInt64
			err := r.Scan(&e.RowID, &rn, &e.Step, &e.Kind, &detail, &server, &tool, &ok, &millis)
			e.RunID, e.Detail, e.Server, e.Tool = idStr(rn), detail.String, server.String, tool.String
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
	f.Audit = append(f.Audit, evs...)
	return err
}

// factGateAttempts reads gate_attempts (put_gate_attempt), oldest first.
func (s *Store) factGateAttempts(ctx context.Context, run int64, f *store.RunFacts) error {
	return s.eachRow(ctx, "SELECT id, step, phase, outcome, detail, at FROM gate_attempts WHERE run_id = ? ORDER BY id", []any{run},
		func(r *sql.Rows) error {
			var g store.GateAttempt
			var outcome, at string
			var detail sql.NullString
			err := r.Scan(&g.RowID, &g.Step, &g.Phase, &outcome, &detail, &at)
			g.Outcome, g.Detail, g.At = store.GateOutcome(outcome), detail.String, parseTime(at)
			f.GateAttempts = append(f.GateAttempts, g)
			return err
		})
}

// factMemory reads the memory entries this run wrote (memory.run_id is the
// run that wrote the value an entry holds now) and the keys it recalled
// (memory_recalls, 0.30).
func (s *Store) factMemory(ctx context.Context, run int64, f *store.RunFacts) error {
	err := s.eachRow(ctx, "SELECT "+s.memoryCols()+" FROM memory WHERE run_id = ? ORDER BY id", []any{run}, func(r *sql.Rows) error {
		m, err := scanMemory(r)
		f.Memory = append(f.Memory, m)
		return err
	})
	if err != nil || !s.si().has("memory_recalls") {
		return err
	}
	seen := map[string]bool{}
	return s.eachRow(ctx, "SELECT key FROM memory_recalls WHERE run_id = ? ORDER BY id", []any{run}, func(r *sql.Rows) error {
		var k string
		err := r.Scan(&k)
		if !seen[k] {
			seen[k] = true
			f.Recalled = append(f.Recalled, k)
		}
		return err
	})
}

// factContextEvents reads the assembler's events other than the per-turn
// 'assembled' rows the drift pane shows.
func (s *Store) factContextEvents(ctx context.Context, run int64, f *store.RunFacts) error {
	evs, err := s.contextEvents(ctx, run, allSteps)
	f.ContextEvents = evs
	return err
}

func (s *Store) contextEvents(ctx context.Context, run int64, step int) ([]store.ContextEvent, error) {
	sp := stepFilter(runSpec{table: "context_events", cols: "kind, " + eventDetail, runs: []int64{run}}, step)
	sp.where = strings.TrimPrefix(sp.where+" AND kind <> '"+ContextAssembled+"'", " AND ")
	type eventRow struct {
		e      store.ContextEvent
		detail cappedText
	}
	rows, err := readRuns(ctx, s, sp, func(r *sql.Rows) (eventRow, error) {
		var x eventRow
		var rn int64
		err := r.Scan(&x.e.RowID, &rn, &x.e.Step, &x.e.Kind, &x.detail.v, &x.detail.n)
		x.e.RunID = idStr(rn)
		return x, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.ContextEvent, len(rows))
	for i, x := range rows {
		if x.e.Detail, x.e.DetailBytes, err = s.detailHead(ctx, x.e.RowID, x.detail); err != nil {
			return nil, err
		}
		out[i] = x.e
	}
	return out, nil
}

// factFolds reads summaries (0.43), oldest first.
func (s *Store) factFolds(ctx context.Context, run int64, f *store.RunFacts) error {
	// A summary is the model's text (Store::put_summary, src/state/memory.rs):
	// its head only, one too long for SQL read in pieces after the rows.
	q := "SELECT id, through_step, folded, " + headAt("text", store.MaxDetailBytes) + ", est_tokens, at FROM summaries WHERE run_id = ? ORDER BY id"
	type fold struct {
		id   int64
		text cappedText
	}
	var rows []fold
	err := s.eachRow(ctx, q, []any{run}, func(r *sql.Rows) error {
		var x store.Fold
		var fr fold
		var at string
		err := r.Scan(&fr.id, &x.Step, &x.Folded, &fr.text.v, &fr.text.n, &x.EstTokens, &at)
		x.At = parseTime(at)
		f.Folds, rows = append(f.Folds, x), append(rows, fr)
		return err
	})
	if err != nil {
		return err
	}
	for i, fr := range rows {
		if f.Folds[i].Text, _, err = s.headOf(ctx, "summaries", "text", fr.id, fr.text, store.MaxDetailBytes); err != nil {
			return err
		}
	}
	return nil
}

// citations reads what the provider cited (0.22), of the run or one step.
func (s *Store) citations(ctx context.Context, run int64, step int) ([]store.Citation, error) {
	if !s.si().has("citations") {
		return nil, nil
	}
	q, args := "SELECT id, step, url, title, cited_text, cited_at FROM citations WHERE run_id = ?", []any{run}
	if step != allSteps {
		q, args = q+" AND step = ?", append(args, step)
	}
	var out []store.Citation
	err := s.eachRow(ctx, q+" ORDER BY id", args, func(r *sql.Rows) error {
		c := store.Citation{RunID: idStr(run)}
		var title, text sql.NullString
		var at string
		err := r.Scan(&c.RowID, &c.Step, &c.URL, &title, &text, &at)
		c.Title, c.CitedText, c.At = title.String, text.String, parseTime(at)
		out = append(out, c)
		return err
	})
	return out, err
}

// serverTools reads what the provider ran for the model (0.22).
func (s *Store) serverTools(ctx context.Context, run int64, step int) ([]store.ServerToolCall, error) {
	if !s.si().has("server_tool_calls") {
		return nil, nil
	}
	q, args := "SELECT id, step, provider, tool, error, ran_at FROM server_tool_calls WHERE run_id = ?", []any{run}
	if step != allSteps {
		q, args = q+" AND step = ?", append(args, step)
	}
	var out []store.ServerToolCall
	err := s.eachRow(ctx, q+" ORDER BY id", args, func(r *sql.Rows) error {
		c := store.ServerToolCall{RunID: idStr(run)}
		var e sql.NullString
		var at string
		err := r.Scan(&c.RowID, &c.Step, &c.Provider, &c.Tool, &e, &at)
		c.Error, c.At = e.String, parseTime(at)
		out = append(out, c)
		return err
	})
	return out, err
}

// todos reads the runs' plans (write_todos replaces a run's list whole, in
// one transaction, so a read sees one list or the next).
func (s *Store) todos(ctx context.Context, runs []int64) (map[string][]store.Todo, error) {
	out := map[string][]store.Todo{}
	in, keep := runFilter("run_id", runs)
	q := "SELECT run_id, position, text, state, written_at FROM todos WHERE " + in + " ORDER BY run_id, position, id"
	err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
		var rn int64
		var t store.Todo
		var state, at string
		err := r.Scan(&rn, &t.Position, &t.Text, &state, &at)
		t.State, t.WrittenAt = store.TodoState(state), parseTime(at)
		if keep(rn) {
			out[idStr(rn)] = append(out[idStr(rn)], t)
		}
		return err
	})
	return out, err
}

// queued reads the children waiting for a slot under the runs
// (enqueue_agent; admission deletes the row).
func (s *Store) queued(ctx context.Context, parents []int64) (map[string][]store.QueuedAgent, error) {
	out := map[string][]store.QueuedAgent{}
	in, keep := runFilter("parent_run_id", parents)
	q := "SELECT parent_run_id, step, goal, depth, queued_at FROM agent_queue WHERE " + in + " ORDER BY id"
	err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
		var p int64
		var a store.QueuedAgent
		var at string
		err := r.Scan(&p, &a.Step, &a.Goal, &a.Depth, &at)
		a.ParentID, a.QueuedAt = idStr(p), parseTime(at)
		if keep(p) {
			out[a.ParentID] = append(out[a.ParentID], a)
		}
		return err
	})
	return out, err
}

// messages reads the messages addressed to the runs (send_message), or only
// those not yet delivered (read_messages stamps read_at as it delivers).
func (s *Store) messages(ctx context.Context, to []int64, unreadOnly bool) (map[string][]store.AgentMessage, error) {
	out := map[string][]store.AgentMessage{}
	in, keep := runFilter("to_run_id", to)
	// A body is what one agent sent another (Store::send_message,
	// src/state/agents.rs): its head only, one too long for SQL read in
	// pieces after the rows.
	q := fmt.Sprintf("SELECT id, from_run_id, to_run_id, from_name, step, %s, sent_at, read_at FROM agent_messages WHERE %s",
		headAt("body", store.MaxDetailBytes), in)
	if unreadOnly {
		q += " AND read_at IS NULL"
	}
	type later struct {
		to string
		i  int
		id int64
		c  cappedText
	}
	var big []later
	err := s.eachRow(ctx, q+" ORDER BY id", nil, func(r *sql.Rows) error {
		var id, from, dest int64
		var m store.AgentMessage
		var sent string
		var read sql.NullString
		var body cappedText
		err := r.Scan(&id, &from, &dest, &m.FromName, &m.Step, &body.v, &body.n, &sent, &read)
		m.ID, m.FromID, m.ToID, m.SentAt, m.ReadAt = idStr(id), idStr(from), idStr(dest), parseTime(sent), nullTime(read)
		m.Body = cutUTF8(body.v.String, store.MaxDetailBytes)
		if read.Valid && m.ReadAt.IsZero() {
			m.ReadAt = time.Unix(0, 0).UTC() // delivered, at a time vigil cannot read
		}
		if keep(dest) {
			if body.leftOut() {
				big = append(big, later{m.ToID, len(out[m.ToID]), id, body})
			}
			out[m.ToID] = append(out[m.ToID], m)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, l := range big {
		if out[l.to][l.i].Body, _, err = s.headOf(ctx, "agent_messages", "body", l.id, l.c, store.MaxDetailBytes); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// processes reads the runs' process handles (record_handle_started and
// record_handle_ended), or only those still running, each with the end of
// what it printed (handle_output).
func (s *Store) processes(ctx context.Context, runs []int64, runningOnly bool) (map[string][]store.Process, error) {
	out := map[string][]store.Process{}
	in, keep := runFilter("run_id", runs)
	q := "SELECT run_id, handle, step, line, pids, state, code, reason, started_at, ended_at FROM process_handles WHERE " + in
	if runningOnly {
		q += " AND state = 'running'"
	}
	var all []store.Process
	err := s.eachRow(ctx, q+" ORDER BY id", nil, func(r *sql.Rows) error {
		var rn int64
		var p store.Process
		var state, started string
		var code sql.NullInt64
		var reason, ended sql.NullString
		err := r.Scan(&rn, &p.Handle, &p.Step, &p.Line, &p.PIDs, &state, &code, &reason, &started, &ended)
		p.RunID, p.State, p.Reason, p.StartedAt, p.EndedAt = idStr(rn), store.ProcessState(state), reason.String, parseTime(started), nullTime(ended)
		if code.Valid {
			c := int(code.Int64)
			p.Code = &c
		}
		if keep(rn) {
			all = append(all, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range all {
		if s.si().has("handle_output") {
			if all[i].Output, err = s.handleTail(ctx, runNum(all[i].RunID), all[i].Handle); err != nil {
				return nil, err
			}
		}
		out[all[i].RunID] = append(out[all[i].RunID], all[i])
	}
	return out, nil
}

// handleTail is the end of a handle's output: its newest chunks, joined
// with nothing between them (io-harness's handle_output), cut to
// MaxProcessOutput bytes.
func (s *Store) handleTail(ctx context.Context, run, handle int64) (string, error) {
	// A chunk is what one poll read (Store::record_handle_output,
	// src/state/agents.rs): a process that printed a lot between polls
	// leaves a huge one. SQL cuts a short chunk's end; a longer one's is
	// read from the store, after the rows (sqlitex.FieldTail).
	type chunk struct {
		id   int64
		text sql.NullString
		size int64
	}
	var chunks []chunk
	n := 0
	q := fmt.Sprintf("SELECT id, CASE WHEN octet_length(chunk) <= %d THEN substr(chunk, -%d) END, octet_length(chunk) FROM handle_output WHERE run_id = ? AND handle = ? ORDER BY id DESC",
		timelineSQLBytes, store.MaxProcessOutput)
	err := s.eachRow(ctx, q, []any{run, handle}, func(r *sql.Rows) error {
		if n >= store.MaxProcessOutput {
			return nil
		}
		var c chunk
		var size sql.NullInt64
		err := r.Scan(&c.id, &c.text, &size)
		c.size = size.Int64
		chunks = append(chunks, c)
		n += min(len(c.text.String), int(c.size))
		if !c.text.Valid {
			n += store.MaxProcessOutput
		}
		return err
	})
	if err != nil {
		return "", err
	}
	reverse(chunks)
	var b strings.Builder
	for _, c := range chunks {
		if c.text.Valid || c.size == 0 {
			b.WriteString(c.text.String)
			continue
		}
		tail, err := sqlitex.FieldTail(ctx, s.read, "handle_output", "chunk", c.id, c.size, store.MaxProcessOutput)
		if err != nil {
			return "", mapDriverErr(s.path, err)
		}
		b.Write(tail)
	}
	out := b.String()
	if len(chunks) > 0 && !chunks[0].text.Valid && chunks[0].size > 0 {
		for len(out) > 0 && out[0]&0xC0 == 0x80 {
			out = out[1:] // a character the tail cut in two
		}
	}
	if len(out) > store.MaxProcessOutput {
		cut := len(out) - store.MaxProcessOutput
		for cut < len(out) && out[cut]&0xC0 == 0x80 {
			cut++
		}
		out = out[cut:]
	}
	return out, nil
}

// defaultPerRun is how many stream events per run an Activity read
// returns when the query does not say.
const defaultPerRun = 32

// Activity reads what the runs of a tree are doing now: their plans, the
// children queued under them, the messages not yet delivered to them, the
// processes still running, and the newest events of each one's Broadcast
// stream: of every run asked about, finished or not, exactly its newest
// PerRun events after the cursor and up to Through (the stream's newest
// event when the read began; the caller's next cursor), however long it
// has been silent and however many events other runs wrote since.
func (s *Store) Activity(ctx context.Context, q store.ActivityQuery) (store.Activity, error) {
	runs := parseIDs(q.RunIDs)
	a := store.Activity{Recorded: store.FactSet{}}
	if len(runs) == 0 {
		return a, nil
	}
	si := s.si()
	var err error
	if si.has("todos") {
		if a.Todos, err = s.todos(ctx, runs); err != nil {
			return a, mapDriverErr(s.path, err)
		}
		a.Recorded.Add(store.FactTodos)
	}
	if si.has("agent_queue") {
		if a.Queued, err = s.queued(ctx, runs); err != nil {
			return a, mapDriverErr(s.path, err)
		}
		a.Recorded.Add(store.FactQueue)
	}
	if si.has("agent_messages") {
		if a.Unread, err = s.messages(ctx, runs, true); err != nil {
			return a, mapDriverErr(s.path, err)
		}
		a.Recorded.Add(store.FactMessages)
	}
	if si.has("process_handles") {
		if a.Processes, err = s.processes(ctx, runs, true); err != nil {
			return a, mapDriverErr(s.path, err)
		}
		a.Recorded.Add(store.FactProcesses)
	}
	if si.has("run_events") {
		per := q.PerRun
		if per <= 0 {
			per = defaultPerRun
		}
		if a.Events, a.Through, err = s.streamEvents(ctx, runs, q.After, per); err != nil {
			return a, mapDriverErr(s.path, err)
		}
		a.Recorded.Add(store.FactRunEvents)
	}
	return a, nil
}

// streamEvents reads the runs' newest n stream events each after the
// cursor, oldest first, bounded by the stream's newest event when it
// began (through): the reads are separate statements, and an event
// committed between two of them is read by the next refresh, never lost
// under a cursor that moved past it.
func (s *Store) streamEvents(ctx context.Context, runs []int64, after int64, n int) (evs []store.RunEvent, through int64, err error) {
	if err := s.eachRow(ctx, "SELECT COALESCE(MAX(id), 0) FROM run_events", nil, func(r *sql.Rows) error {
		return r.Scan(&through)
	}); err != nil {
		return nil, 0, err
	}
	through = max(through, after)
	// Fewer events to read than runs to seek (a new stream, the common
	// refresh), or a big tree's refresh: the range.
	if through-after <= int64(len(runs)) || (len(runs) > manyIDs && after > 0) {
		evs, err = s.eventsSince(ctx, runs, after, through, n)
	} else {
		evs, err = s.newestOfEach(ctx, runs, after, through, n)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].ID < evs[j].ID })
	return evs, through, err
}

// (An event's JSON longer than maxEventJSON reads NULL, never loaded: cut
// JSON would not parse either, and a tool's output in one can be huge.)
const eventCols = "id, run_id, step, kind, CASE WHEN octet_length(json) <= %d THEN json END, at"

func scanEvent(r *sql.Rows) (store.RunEvent, error) {
	var e store.RunEvent
	var rn int64
	var raw sql.NullString
	var at string
	if err := r.Scan(&e.ID, &rn, &e.Step, &e.Name, &raw, &at); err != nil {
		return e, err
	}
	e.RunID, e.At = idStr(rn), parseTime(at)
	liveEvent(&e, raw.String)
	return e, nil
}

// runEvents reads one run's newest stream events in (after, through],
// oldest first: one seek on run_events_run (run_id, id), at most n rows.
// (RunFacts reads a run's last event with it; it is the tests' oracle of
// newestOfEach.)
func (s *Store) runEvents(ctx context.Context, run, after, through int64, n int) ([]store.RunEvent, error) {
	q := fmt.Sprintf("SELECT "+eventCols+" FROM run_events WHERE run_id = ? AND id > ? AND id <= ? ORDER BY id DESC LIMIT %d",
		maxEventJSON, n)
	var out []store.RunEvent
	err := s.eachRow(ctx, q, []any{run, after, through}, func(r *sql.Rows) error {
		e, err := scanEvent(r)
		out = append(out, e)
		return err
	})
	reverse(out)
	return out, err
}

// runFilter is a WHERE clause for rows of the runs: an IN list of a few,
// or (past manyIDs, where SQLite parsing the literals cost more than the
// read: a tree of 100 k agents) every row, with keep saying which are
// theirs. These tables hold what runs have open now, so they stay small.
func runFilter(col string, runs []int64) (where string, keep func(int64) bool) {
	if len(runs) <= manyIDs {
		return col + " IN (" + sqlitex.IDList(runs) + ")", func(int64) bool { return true }
	}
	want := make(map[int64]struct{}, len(runs))
	for _, r := range runs {
		want[r] = struct{}{}
	}
	return "1", func(r int64) bool { _, ok := want[r]; return ok }
}

// The stream is never read with a statement per agent (runEvents: 100 k
// of them took seconds on every refresh):
//
//   - newestOfEach hands SQLite the runs' ids as one JSON array and seeks
//     each one's newest n on run_events_run in a single statement: exact,
//     for an agent silent for hours as for one streaming. On the 100 k-agent
//     store of BenchmarkBigTreeFirstRead (a million events) it took 5.7 s
//     where a statement per agent took 9.2 and a covering scan of the index
//     keeping each agent's newest ids in Go 6.8; on its thousand busiest
//     agents 0.65 s where a statement each took 0.71.
//   - A refresh of a tree of more than manyIDs agents (eventsSince) reads
//     every event after the cursor instead, newest first down the rowid, in
//     pages of eventPage, keeping the tree's: its cost is what was written
//     since the last refresh, not the tree's size (the cursor is the
//     stream's end, so that is all it reads). So does any read with fewer
//     events in its range than runs to seek: the first read of a 100 k tree
//     whose stream is empty cost 99 ms of seeks, and reads nothing now.

// eventPage is how many events one statement of a refresh reads: a read
// transaction stays short when a refresh has a lot to catch up on.
const eventPage = 8192

// eventsSince reads the runs' newest n events each in (after, through].
func (s *Store) eventsSince(ctx context.Context, runs []int64, after, through int64, n int) ([]store.RunEvent, error) {
	if through <= after {
		return nil, nil
	}
	want := make(map[int64]int, len(runs))
	for _, r := range runs {
		want[r] = 0
	}
	q := fmt.Sprintf("SELECT "+eventCols+" FROM run_events WHERE id > ? AND id <= ? ORDER BY id DESC LIMIT %d", maxEventJSON, eventPage)
	var out []store.RunEvent
	for hi := through; hi > after; {
		rows, low := 0, hi
		err := s.eachRow(ctx, q, []any{after, hi}, func(r *sql.Rows) error {
			e, err := scanEvent(r)
			if err != nil {
				return err
			}
			rows, low = rows+1, e.ID
			rn := runNum(e.RunID)
			if k, ok := want[rn]; ok && k < n {
				want[rn]++
				out = append(out, e)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if rows < eventPage {
			break
		}
		hi = low - 1
	}
	reverse(out)
	return out, nil
}

// newestOfEach reads the runs' newest n events each in (after, through]:
// for each id of the array (json_each), a seek to the run's n-th newest
// event on run_events_run and the range from there.
func (s *Store) newestOfEach(ctx context.Context, runs []int64, after, through int64, n int) ([]store.RunEvent, error) {
	var ids strings.Builder
	ids.WriteByte('[')
	for i, r := range runs {
		if i > 0 {
			ids.WriteByte(',')
		}
		ids.WriteString(strconv.FormatInt(r, 10))
	}
	ids.WriteByte(']')
	q := fmt.Sprintf(`SELECT e.id, e.run_id, e.step, e.kind, CASE WHEN octet_length(e.json) <= %d THEN e.json END, e.at
FROM json_each(?1) AS w CROSS JOIN run_events AS e INDEXED BY run_events_run
WHERE e.run_id = w.value AND e.id > ?3 AND e.id <= ?2 AND e.id >= COALESCE(
	(SELECT x.id FROM run_events AS x INDEXED BY run_events_run WHERE x.run_id = w.value AND x.id <= ?2 ORDER BY x.id DESC LIMIT 1 OFFSET %d), 0)`,
		maxEventJSON, n-1)
	var out []store.RunEvent
	err := s.eachRow(ctx, q, []any{ids.String(), through, after}, func(r *sql.Rows) error {
		e, err := scanEvent(r)
		out = append(out, e)
		return err
	})
	return out, err
}

// maxEventJSON caps how much of one event's JSON is read: a token chunk or
// a reviewer's reasons can be long, and the strip shows one line.
const maxEventJSON = 16 << 10

// liveEvent reads one RunEvent's JSON, as io-harness's Broadcast writes it
// (put_event: serde's flat, tagged shape {"run_id","step","depth","event",
// …fields}), into what the event shows the run doing. The tag is the kind
// column (io-harness denormalises it out of the JSON); an event whose JSON
// was cut or does not parse keeps its kind and says nothing more.
// eventFields are the fields of a RunEvent's JSON liveEvent reads: one
// decode into a struct, not a map of raw values decoded again one by one
// (a 100 k-agent tree's first read decodes half a million events).
type eventFields struct {
	Event        string            `json:"event"`
	Act          string            `json:"act"`
	AfterTokens  int64             `json:"after_tokens"`
	Attempt      int64             `json:"attempt"`
	BeforeTokens int64             `json:"before_tokens"`
	By           string            `json:"by"`
	Bytes        int64             `json:"bytes"`
	ChildRunID   int64             `json:"child_run_id"`
	Decision     string            `json:"decision"`
	DelayMs      int64             `json:"delay_ms"`
	Done         int64             `json:"done"`
	Goal         string            `json:"goal"`
	Handle       int64             `json:"handle"`
	Kind         string            `json:"kind"`
	Line         string            `json:"line"`
	Name         string            `json:"name"`
	Outcome      string            `json:"outcome"`
	PlanID       int64             `json:"plan_id"`
	Provider     string            `json:"provider"`
	Question     string            `json:"question"`
	Queued       int64             `json:"queued"`
	Server       string            `json:"server"`
	Target       string            `json:"target"`
	Text         string            `json:"text"`
	ThroughStep  int64             `json:"through_step"`
	Tier         int64             `json:"tier"`
	Tool         string            `json:"tool"`
	Verdict      string            `json:"verdict"`
	Working      int64             `json:"working"`
	OK           json.RawMessage   `json:"ok"`   // as given: absent, false and not a boolean differ
	Code         json.RawMessage   `json:"code"` // null when it has none
	Passed       bool              `json:"passed"`
	Steps        []json.RawMessage `json:"steps"`
}

func liveEvent(e *store.RunEvent, raw string) {
	var v eventFields
	_ = json.Unmarshal([]byte(raw), &v) // a field of the wrong type is left empty, the rest read
	if e.Name == "" {
		e.Name = v.Event
	}
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, " ")
	}
	e.Kind = store.LiveOther
	switch e.Name {
	case "started":
		e.Kind, e.Text = store.LiveStarted, v.Provider
	case "token":
		e.Kind, e.Size = store.LiveModel, len(v.Text)
	case "reasoning":
		e.Kind, e.Size, e.Text = store.LiveModel, len(v.Text), "thinking"
	case "tool_call":
		e.Kind, e.Text = store.LiveTool, join(v.Name, v.Target)
	case "server_tool_used":
		e.Kind, e.Text = store.LiveModel, join(v.Provider, "ran", v.Tool)
		var ok bool
		if json.Unmarshal(v.OK, &ok) == nil && !ok {
			e.Text += " (failed)"
		}
	case "retry":
		e.Kind, e.Text = store.LiveRetry, fmt.Sprintf("%s, attempt %d", v.Kind, v.Attempt)
		e.Wait = time.Duration(v.DelayMs) * time.Millisecond
	case "approval_requested":
		e.Kind, e.Text = store.LiveWaiting, join("approval:", v.Act, v.Target)
	case "question_asked":
		e.Kind, e.Text = store.LiveWaiting, join("question:", v.Question)
	case "plan_proposed":
		e.Kind, e.Text = store.LiveWaiting, fmt.Sprintf("plan %d of %d step(s)", v.PlanID, len(v.Steps))
	case "recovery_paused":
		e.Kind, e.Text = store.LiveWaiting, join("recovery:", v.Tool)
	case "approval_decided":
		e.Kind, e.Text = store.LiveDecided, join(v.Decision, v.Act, v.Target)
	case "question_answered":
		e.Kind, e.Text = store.LiveDecided, join("answered by", v.By)
	case "plan_decided":
		e.Kind, e.Text = store.LiveDecided, join(v.Verdict, "by", v.By)
	case "spawned":
		e.Kind, e.Text = store.LiveSpawned, join(fmt.Sprintf("#%d", v.ChildRunID), v.Goal)
	case "fleet":
		e.Kind, e.Text = store.LiveSpawned, fmt.Sprintf("tier %d: %d working, %d queued, %d done", v.Tier, v.Working, v.Queued, v.Done)
	case "handle_started":
		e.Kind, e.Text = store.LiveProcess, v.Line
	case "handle_polled":
		e.Kind, e.Text = store.LiveProcess, fmt.Sprintf("handle %d: %d bytes", v.Handle, v.Bytes)
	case "handle_exited":
		e.Text = fmt.Sprintf("handle %d exited", v.Handle)
		var code *int64
		if json.Unmarshal(v.Code, &code) == nil && code != nil {
			e.Text += fmt.Sprintf(" (%d)", *code)
		}
	case "handle_killed":
		e.Text = fmt.Sprintf("handle %d killed", v.Handle)
	case "handle_orphaned":
		e.Text = fmt.Sprintf("handle %d orphaned", v.Handle)
	case "reviewed":
		e.Kind, e.Text = store.LiveGate, "review failed"
		if v.Passed {
			e.Text = "review passed"
		}
	case "sandbox":
		e.Text = join("sandbox", v.Kind)
		if v.Kind == "gate_phase_failed" {
			e.Kind = store.LiveGate
		}
	case "mcp":
		e.Text = join("mcp", v.Server, v.Tool)
	case "refused":
		e.Text = join("refused", v.Act, v.Target)
	case "fell_back_to":
		e.Text = join("fell back to", v.Provider)
	case "compacted":
		e.Text = fmt.Sprintf("compacted through step %d: %d → %d tokens", v.ThroughStep, v.BeforeTokens, v.AfterTokens)
	case "step":
		e.Kind, e.Text = store.LiveStep, v.Decision
	case "finished":
		e.Kind, e.Text = store.LiveFinished, v.Outcome
	}
}

// LastWrite is the newest time any row of the store carries: each
// time-stamped table's newest row (they are appended in time order), the
// newest lease renewal (renewed inside every step commit of a leased run)
// and the newest run ending. One statement, one short read. Steps and
// context events carry no time; their provider calls and lease renewals
// do. Zero when the store holds no timed row.
func (s *Store) LastWrite(ctx context.Context) (time.Time, error) {
	si := s.si()
	newest := []struct{ table, col string }{
		{"runs", "started_at"}, {"provider_calls", "at"}, {"pending_questions", "asked_at"}, {"plans", "proposed_at"},
		{"edits", "at"}, {"sessions", "created_at"}, {"session_turns", "created_at"}, {"todos", "written_at"},
		{"citations", "cited_at"}, {"server_tool_calls", "ran_at"}, {"process_handles", "started_at"},
		{"handle_output", "read_at"}, {"snapshots", "at"}, {"agent_queue", "queued_at"}, {"run_events", "at"},
		{"memory_snapshots", "at"}, {"rewinds", "at"}, {"gate_attempts", "at"}, {"summaries", "at"},
		{"agent_messages", "sent_at"}, {"tool_attempts", "started_at"}, {"memory_recalls", "at"},
	}
	var parts []string
	for _, n := range newest {
		if si.hasCol(n.table, n.col) && si.hasCol(n.table, "id") {
			parts = append(parts, fmt.Sprintf("SELECT (SELECT %s FROM %s ORDER BY id DESC LIMIT 1)", n.col, n.table))
		}
	}
	for _, m := range []struct{ table, col string }{{"run_leases", "renewed_at"}, {"run_outcomes", "finished_at"}, {"memory", "created_at"}} {
		if si.hasCol(m.table, m.col) {
			parts = append(parts, fmt.Sprintf("SELECT MAX(%s) FROM %s", m.col, m.table))
		}
	}
	if len(parts) == 0 {
		return time.Time{}, nil
	}
	var last time.Time
	err := s.eachRow(ctx, strings.Join(parts, " UNION ALL "), nil, func(r *sql.Rows) error {
		var v sql.NullString
		if err := r.Scan(&v); err != nil {
			return err
		}
		if t := nullTime(v); t.After(last) {
			last = t
		}
		return nil
	})
	return last, err
}
