package starweaver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
)

// The timeline has a row per model turn (a model_response record of the
// raw stream, its tool calls in ToolCall) and a row per tool return (the
// call's result, or the approval or deferral it asks for), both numbered by
// the turn (run_step). Three more events end a stretch of a run and get a
// row under the last turn's number: suspended (parked on a human),
// run_failed and run_cancelled. Everything else in the stream (node
// events, stream deltas, checkpoints, tool_call copies) is detail.

// stepKinds prefilters stream rows in SQL to the records that can be
// steps; decoding decides.
const stepKinds = `(record LIKE '%"model_response"%' OR record LIKE '%"tool_return"%' OR record LIKE '%"suspended"%' OR record LIKE '%"run_failed"%' OR record LIKE '%"run_cancelled"%')`

// summaryBytes caps the tool call a timeline row carries.
const summaryBytes = 240

// decisionBytes caps a step's one-line decision (the turn's text is whole
// in the detail).
const decisionBytes = 400

// streamRow is one decoded stream_records row.
type streamRow struct {
	rowid   int64
	session string
	run     string
	rec     streamRec
}

func (s *Store) streamRows(ctx context.Context, where string, args ...any) ([]streamRow, error) {
	var out, big []streamRow
	q := fmt.Sprintf("SELECT rowid, session_id, run_id, CASE WHEN octet_length(record) <= %d THEN record END, octet_length(record) FROM stream_records ",
		bigRecord) + guardLikes(where)
	sizes := map[int64]int64{}
	err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
		var x streamRow
		var rec []byte
		var size sql.NullInt64
		if err := r.Scan(&x.rowid, &x.session, &x.run, &rec, &size); err != nil {
			return err
		}
		if size.Int64 > bigRecord {
			sizes[x.rowid] = size.Int64
			big = append(big, x) // read once the query is done with the connection
			out = append(out, x)
			return nil
		}
		if decode(rec, schemaStream, true, &x.rec) {
			out = append(out, x)
		}
		return nil
	})
	if err != nil || len(big) == 0 {
		return out, err
	}
	kept := out[:0]
	for _, x := range out {
		size, isBig := sizes[x.rowid]
		if !isBig {
			kept = append(kept, x)
			continue
		}
		rec, err := s.shrunk(ctx, "stream_records", x.rowid, size)
		if err != nil {
			return nil, err
		}
		if decode(rec, schemaStream, true, &x.rec) {
			kept = append(kept, x)
		}
	}
	return kept, nil
}

// own reports whether a row is its run's own record, not a copy merged in
// from a subagent (which names itself in source).
func (x streamRow) own() bool {
	merged, src := x.rec.source()
	return !merged || src == x.run
}

// tail is where a run's timeline stands: its last model turn and how
// many responses that turn has had.
type tail struct {
	step, attempt int
}

// stepOf turns a stream row into a timeline row (and, for a model turn,
// the provider call it was), or ok false for a row that is not a step.
// t is the run's tail before the row and is advanced.
func stepOf(x streamRow, owner string, t *tail) (row store.StepRow, call *store.ProviderCall, ok bool) {
	ev := &x.rec.Event
	row = store.StepRow{RowID: x.rowid, RunID: owner}
	switch ev.Kind {
	case "model_response":
		if ev.Step == t.step {
			t.attempt++
		} else {
			t.step, t.attempt = ev.Step, 1
		}
		row.Number = ev.Step
		resp := ev.Response
		if resp == nil {
			resp = &modelResponse{}
		}
		row.Decision = turnDecision(resp)
		row.ToolCall = cutBytes(callSummary(resp.calls()), summaryBytes)
		c := &store.ProviderCall{RowID: x.rowid, RunID: owner, Step: ev.Step, Attempt: t.attempt, Model: resp.Model,
			FinishReason: resp.FinishReason, At: parseTS(resp.Timestamp)}
		if resp.Provider != nil {
			c.Provider = resp.Provider.Name
		}
		if u := resp.Usage; u != nil {
			c.PromptTokens, c.CompletionTokens, c.TotalTokens = u.InputTokens, u.OutputTokens, u.TotalTokens
			c.CacheReadTokens, c.CacheWriteTokens = u.CacheReadTokens, u.CacheWriteTokens
			if u.TotalTokens != nil {
				row.Tokens = *u.TotalTokens
			}
		}
		return row, c, true
	case "tool_return":
		tr := ev.ToolReturn
		if tr == nil {
			return row, nil, false
		}
		row.Number = ev.Step
		row.Decision, row.ResultHead = returnLine(tr, owner)
		return row, nil, true
	case "suspended", "run_failed", "run_cancelled":
		if owner != x.run {
			return row, nil, false // a subagent's end shows in its own run
		}
		row.Number = t.step
		row.Decision = cutBytes(endLine(ev), decisionBytes)
		return row, nil, true
	}
	return row, nil, false
}

// returnLine is a tool return in one line, and the first line of what it
// returned.
func returnLine(tr *toolReturn, runID string) (decision, head string) {
	switch tr.Metadata.ControlFlow {
	case "approval_required":
		return "approval required: " + tr.Name, "approval_" + runID + "_" + tr.ToolCallID
	case "call_deferred":
		return "deferred: " + tr.Name, "deferred_" + runID + "_" + tr.ToolCallID
	}
	decision = "result " + tr.Name
	if tr.IsError {
		decision = "error " + tr.Name
	}
	for _, l := range strings.Split(prettyJSON(tr.Content), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return decision, cutBytes(l, summaryBytes)
		}
	}
	return decision, ""
}

// endLine says how a stretch of a run ended.
func endLine(ev *streamEvent) string {
	switch ev.Kind {
	case "suspended":
		line := "suspended: waits on a human"
		if r := rawText(ev.Reason); r != "" {
			line += " (" + r + ")"
		}
		if ev.Node != "" {
			line += " at " + ev.Node
		}
		return line
	case "run_failed":
		line := "run failed"
		if ev.ErrorKind != "" {
			line += " (" + ev.ErrorKind + ")"
		}
		if ev.Message != "" {
			line += ": " + ev.Message
		}
		return line
	case "run_cancelled":
		if r := rawText(ev.Reason); r != "" {
			return "run cancelled: " + r
		}
		return "run cancelled"
	}
	return ev.Kind
}

// rawText is a JSON value as text: a string unquoted, anything else compact.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return compactJSON(raw)
}

// turnDecision is a model turn in one line: the first line the model
// wrote, else the tools it called, else why it stopped.
func turnDecision(resp *modelResponse) string {
	for _, p := range resp.Parts {
		if p.Kind != "text" && p.Kind != "provider_text" {
			continue
		}
		for _, l := range strings.Split(p.Text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				return cutBytes(l, decisionBytes)
			}
		}
	}
	if calls := resp.calls(); len(calls) > 0 {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = c.Name
		}
		return "calls " + strings.Join(names, ", ")
	}
	if resp.FinishReason != "" {
		return "(no text; finish reason " + resp.FinishReason + ")"
	}
	return "(no text)"
}

// callSummary is a turn's tool calls on one line: name and arguments.
func callSummary(calls []toolCall) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		p := c.Name
		if a := compactJSON(c.Arguments); a != "" {
			p += " " + a
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// timeline reads a run's step rows and provider calls, oldest first.
func (s *Store) timeline(ctx context.Context, runID string) ([]store.StepRow, []store.ProviderCall, error) {
	rows, err := s.timelineRows(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	var steps []store.StepRow
	var calls []store.ProviderCall
	var t tail
	for _, x := range rows {
		row, call, ok := stepOf(x, runID, &t)
		if !ok {
			continue
		}
		steps = append(steps, row)
		if call != nil {
			calls = append(calls, *call)
		}
	}
	return steps, calls, nil
}

// timelineRows are the stream rows a run's timeline is made of: its own,
// or the copies merged into its parent's stream when it has none.
func (s *Store) timelineRows(ctx context.Context, runID string) ([]streamRow, error) {
	m, err := s.mustMeta(ctx, runID)
	if err != nil {
		return nil, err
	}
	rows, err := s.streamRows(ctx, "WHERE session_id = ? AND run_id = ? AND "+stepKinds+" ORDER BY rowid", m.session, runID)
	if err != nil {
		return nil, err
	}
	own := rows[:0]
	for _, x := range rows {
		if x.own() {
			own = append(own, x)
		}
	}
	rows = own
	if len(rows) == 0 && m.parent != "" {
		return s.mergedRows(ctx, runID, m, "AND "+stepKinds)
	}
	return rows, nil
}

// mergedRows are the copies of a subagent's records merged into its
// parent's stream, used when the subagent has no stream of its own.
func (s *Store) mergedRows(ctx context.Context, runID string, m runMeta, filter string) ([]streamRow, error) {
	own, err := s.hasOwnStream(ctx, runID)
	if err != nil || own {
		return nil, err
	}
	pm, ok, err := s.metaOf(ctx, m.parent)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := s.streamRows(ctx, "WHERE session_id = ? AND run_id = ? AND record LIKE ? "+filter+" ORDER BY rowid",
		pm.session, m.parent, "%"+likeEscape(runID)+"%")
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, x := range rows {
		if merged, src := x.rec.source(); merged && src == runID {
			out = append(out, x)
		}
	}
	return out, nil
}

// Steps returns a run's timeline: one step per model turn, and a row for
// each suspension, failure or cancellation. RowIDs are stream_records
// rowids: stable, and increasing within a run.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	rows, calls, err := s.timeline(ctx, runID)
	if err != nil {
		return nil, err
	}
	steps := store.AppendStepRows(nil, rows)
	store.StampSteps(steps, calls)
	return steps, nil
}

// ProviderCalls returns one call per model response of the run: provider,
// model, the usage it reported and its finish reason. Starweaver records
// no request time, so LatencyMS is 0.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	_, calls, err := s.timeline(ctx, runID)
	return calls, err
}

// ContextSamples is empty: a sample is the context assembler's estimate
// beside the provider's count, and Starweaver records only the provider's
// usage — no estimate to set beside it. The provider's input count of each
// turn is in its provider call (PromptTokens).
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	if _, err := s.mustMeta(ctx, runID); err != nil {
		return nil, err
	}
	return nil, nil
}

// StepDetail reads everything recorded about one step row: the turn's
// text, its calls in full, their returns, the checkpoints taken at that
// step, the HITL display messages about its calls, and its provider call.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	m, err := s.mustMeta(ctx, runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	rows, err := s.streamRows(ctx, "WHERE rowid = ?", rowID)
	if err != nil {
		return store.StepDetail{}, err
	}
	noRow := errf(s.path, store.ErrNoSuchRun, nil, "no such run: run %s has no step row %d", runID, rowID)
	if len(rows) == 0 {
		return store.StepDetail{}, noRow
	}
	x := rows[0]
	merged := false
	switch {
	case x.run == runID && x.session == m.session && x.own():
	case x.run == m.parent && !x.own():
		if _, src := x.rec.source(); src != runID {
			return store.StepDetail{}, noRow
		}
		if own, err := s.hasOwnStream(ctx, runID); err != nil {
			return store.StepDetail{}, err
		} else if own {
			return store.StepDetail{}, noRow
		}
		merged = true
	default:
		return store.StepDetail{}, noRow
	}
	// The run's tail before this row: its turn and attempt number.
	t, first, err := s.tailBefore(ctx, x, runID, merged)
	if err != nil {
		return store.StepDetail{}, err
	}
	row, call, ok := stepOf(x, runID, &t)
	if !ok {
		return store.StepDetail{}, noRow
	}
	d := store.StepDetail{Step: store.Step{RowID: row.RowID, RunID: runID, Number: row.Number, Decision: row.Decision,
		ToolCall: row.ToolCall, Tokens: row.Tokens}}
	d.ResultHead = row.ResultHead
	ev := &x.rec.Event
	switch {
	case ev.Kind == "tool_return":
		return s.returnDetail(ctx, x, runID, m.session, d)
	case call == nil:
		d.Decision = endLine(ev)
		d.Result = endDetail(ev)
		return d, nil
	}
	d.ProviderCalls = []store.ProviderCall{*call}
	d.ServerTools = serverTools(x, runID, call)
	d.At = call.At
	resp := ev.Response
	if resp == nil {
		resp = &modelResponse{}
	}
	d.TurnText, d.HasTurnText = resp.text()
	calls := resp.calls()
	var full []string
	for _, c := range calls {
		full = append(full, callText(c))
		d.Tools = append(d.Tools, store.ToolCall{ID: c.ID, Name: c.Name, Arguments: cutBytes(compactJSON(c.Arguments), store.MaxDetailBytes)})
	}
	d.ToolCallFull = strings.Join(full, "\n\n")
	d.ToolCall = d.ToolCallFull
	if first {
		if rec, err := s.runRecord(ctx, m.session, runID); err != nil {
			return store.StepDetail{}, err
		} else if rec != nil {
			d.Prompt = rec.prompt()
		}
	}
	if d.Result, err = s.returnsOf(ctx, x, runID, merged, calls); err != nil {
		return store.StepDetail{}, err
	}
	if d.Observations, err = s.observations(ctx, m.session, runID, row.Number, calls); err != nil {
		return store.StepDetail{}, err
	}
	for name, f := range map[string]*string{"prompt": &d.Prompt, "result": &d.Result, "tool call": &d.ToolCallFull, "turn": &d.TurnText} {
		if len(*f) > store.MaxDetailBytes {
			*f = cutBytes(*f, store.MaxDetailBytes)
			d.Truncated = append(d.Truncated, name)
		}
	}
	d.ToolCall = cutBytes(d.ToolCall, store.MaxDetailBytes)
	return d, nil
}

// returnDetail is a tool return row: what came back in full, and the call
// it answers.
func (s *Store) returnDetail(ctx context.Context, x streamRow, runID, session string, d store.StepDetail) (store.StepDetail, error) {
	tr := x.rec.Event.ToolReturn
	d.Result = returnText(tr, runID)
	_, c, err := s.findCall(ctx, x.session, x.run, tr.ToolCallID)
	if err != nil {
		return d, err
	}
	var calls []toolCall
	if c != nil {
		calls = []toolCall{*c}
		d.ToolCallFull = callText(*c)
	} else {
		calls = []toolCall{{ID: tr.ToolCallID, Name: tr.Name}}
	}
	d.ToolCall = cutBytes(d.ToolCallFull, summaryBytes)
	if d.Observations, err = s.observations(ctx, session, runID, -1, calls); err != nil {
		return d, err
	}
	if len(d.Result) > store.MaxDetailBytes {
		d.Result = cutBytes(d.Result, store.MaxDetailBytes)
		d.Truncated = append(d.Truncated, "result")
	}
	return d, nil
}

// callText is a tool call in full: its name, id and arguments.
func callText(c toolCall) string {
	line := c.Name
	if c.ID != "" {
		line += " (" + c.ID + ")"
	}
	if a := prettyJSON(c.Arguments); a != "" {
		line += "\n" + a
	}
	return line
}

// endDetail is the whole of a suspension, failure or cancellation.
func endDetail(ev *streamEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "event: %s\n", ev.Kind)
	if ev.Node != "" {
		fmt.Fprintf(&b, "node: %s\n", ev.Node)
	}
	if r := rawText(ev.Reason); r != "" {
		fmt.Fprintf(&b, "reason: %s\n", r)
	}
	if ev.ErrorKind != "" {
		fmt.Fprintf(&b, "error kind: %s\n", ev.ErrorKind)
	}
	if ev.Message != "" {
		fmt.Fprintf(&b, "message: %s\n", ev.Message)
	}
	return strings.TrimRight(b.String(), "\n")
}

// tailBefore is a run's tail just before a stream row, read back from the
// model turns before it; first says there were none.
func (s *Store) tailBefore(ctx context.Context, x streamRow, runID string, merged bool) (tail, bool, error) {
	q := "WHERE session_id = ? AND run_id = ? AND rowid < ? AND record LIKE '%\"model_response\"%'"
	args := []any{x.session, x.run, x.rowid}
	if merged {
		q += " AND record LIKE ?"
		args = append(args, "%"+likeEscape(runID)+"%")
	}
	var t tail
	seen := false
	for before := x.rowid; ; {
		args[2] = before
		rows, err := s.streamRows(ctx, q+" ORDER BY rowid DESC LIMIT 16", args...)
		if err != nil {
			return t, false, err
		}
		for _, r := range rows {
			before = r.rowid
			if r.rec.Event.Kind != "model_response" || r.own() == merged {
				continue
			}
			if merged {
				if _, src := r.rec.source(); src != runID {
					continue
				}
			}
			switch {
			case !seen:
				seen, t = true, tail{step: r.rec.Event.Step, attempt: 1}
			case r.rec.Event.Step == t.step:
				t.attempt++
			default:
				return t, false, nil
			}
		}
		if len(rows) < 16 {
			return t, !seen, nil
		}
	}
}

// returnsOf reads the returns of a turn's calls: the tool_return records
// after the turn, up to the next turn.
func (s *Store) returnsOf(ctx context.Context, x streamRow, runID string, merged bool, calls []toolCall) (string, error) {
	if len(calls) == 0 {
		return "", nil
	}
	want := map[string]bool{}
	for _, c := range calls {
		want[c.ID] = true
	}
	rows, err := s.streamRows(ctx, `WHERE session_id = ? AND run_id = ? AND rowid > ?
		AND (record LIKE '%"tool_return"%' OR record LIKE '%"model_response"%') ORDER BY rowid LIMIT 500`, x.session, x.run, x.rowid)
	if err != nil {
		return "", err
	}
	var out []string
	for _, r := range rows {
		if merged {
			if _, src := r.rec.source(); src != runID {
				continue
			}
		} else if !r.own() {
			continue
		}
		ev := &r.rec.Event
		if ev.Kind == "model_response" {
			break
		}
		if ev.Kind != "tool_return" || ev.ToolReturn == nil || !want[ev.ToolReturn.ToolCallID] {
			continue
		}
		out = append(out, returnText(ev.ToolReturn, runID))
		delete(want, ev.ToolReturn.ToolCallID)
		if len(want) == 0 {
			break
		}
	}
	return strings.Join(out, "\n\n"), nil
}

// returnText is one tool return as the detail shows it.
func returnText(tr *toolReturn, runID string) string {
	head := tr.Name
	switch tr.Metadata.ControlFlow {
	case "approval_required":
		return head + ": approval required — approval_" + runID + "_" + tr.ToolCallID
	case "call_deferred":
		return head + ": deferred to an external result — deferred_" + runID + "_" + tr.ToolCallID
	}
	if tr.IsError {
		head += " (error)"
	}
	body := prettyJSON(tr.Content)
	if body == "" {
		return head + ": (no content)"
	}
	return head + ":\n" + body
}

// runRecord reads one run record.
func (s *Store) runRecord(ctx context.Context, session, runID string) (*runRec, error) {
	rows, err := s.queryRuns(ctx, "WHERE session_id = ? AND run_id = ?", session, runID)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0].rec, nil
}

// observations are the checkpoints taken at a step and the display
// messages about its calls' approvals and deferrals.
func (s *Store) observations(ctx context.Context, session, runID string, step int, calls []toolCall) ([]store.Observation, error) {
	var out []store.Observation
	err := s.eachRow(ctx, "SELECT checkpoint_id, record FROM checkpoint_records WHERE session_id = ? AND run_id = ? AND sequence_no = ? ORDER BY rowid",
		[]any{session, runID, step}, func(r *sql.Rows) error {
			var id string
			var rec []byte
			if err := r.Scan(&id, &rec); err != nil {
				return err
			}
			var c checkpointRec
			if decode(rec, schemaCheckpoint, true, &c) {
				out = append(out, store.Observation{Kind: "checkpoint", Target: c.Node, Text: id})
			}
			return nil
		})
	if err != nil || len(calls) == 0 {
		return out, err
	}
	ids := map[string]bool{}
	for _, c := range calls {
		ids[c.ID] = true
		ids["approval_"+runID+"_"+c.ID] = true
		ids["deferred_"+runID+"_"+c.ID] = true
	}
	err = s.eachRow(ctx, `SELECT record FROM display_message_records WHERE scope = ?
		AND (record LIKE '%"type":"APPROVAL%' OR record LIKE '%"type":"HITL%' OR record LIKE '%"type":"DEFERRED_REQUESTED"%') ORDER BY sequence_no`,
		[]any{"run:" + runID}, func(r *sql.Rows) error {
			var rec []byte
			if err := r.Scan(&rec); err != nil {
				return err
			}
			var de displayEvent
			if !decode(rec, schemaReplay, true, &de) || de.Event.Kind != "display_message" || !hitlDisplay[de.Event.Type] {
				return nil
			}
			var p struct {
				ToolCallID string `json:"tool_call_id"`
				ApprovalID string `json:"approval_id"`
				DeferredID string `json:"deferred_id"`
				ToolName   string `json:"tool_name"`
			}
			_ = json.Unmarshal(de.Event.Payload, &p)
			if !ids[p.ToolCallID] && !ids[p.ApprovalID] && !ids[p.DeferredID] {
				return nil
			}
			text := de.Event.Preview
			if pol := de.Event.Metadata.Policy; pol != nil && pol.HITL != "" {
				text += " (hitl policy " + pol.HITL + ")"
			}
			out = append(out, store.Observation{Kind: strings.ToLower(de.Event.Type), Target: p.ToolName, Text: text})
			return nil
		})
	return out, err
}

// hitlDisplay are the display types that speak of a call's approval or
// deferral.
var hitlDisplay = map[string]bool{"APPROVAL_REQUESTED": true, "APPROVAL_RESOLVED": true, "HITL_RESOLVED": true,
	"HITL_DIAGNOSTIC": true, "DEFERRED_REQUESTED": true}

// AgentEvents returns the runs' checkpoints ("checkpoint", at their
// run_step) and the subagents they delegated to ("spawn", naming the
// child), oldest first.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	if len(runIDs) == 0 {
		s.mu.Lock()
		for id := range s.meta {
			runIDs = append(runIDs, id)
		}
		s.mu.Unlock()
	}
	var out []store.AgentEvent
	for _, id := range runIDs {
		m, ok, err := s.metaOf(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		err = s.eachRow(ctx, "SELECT rowid, run_id, sequence_no, checkpoint_id, record FROM checkpoint_records WHERE session_id = ? AND run_id = ? ORDER BY rowid",
			[]any{m.session, id}, func(r *sql.Rows) error {
				e, ok, err := scanCheckpoint(r)
				if ok {
					out = append(out, e)
				}
				return err
			})
		if err != nil {
			return nil, err
		}
		kids, err := s.queryRuns(ctx, "WHERE session_id = ? AND record LIKE ? ORDER BY rowid", m.session, `%"parent_run_id"%`+likeEscape(id)+`%`)
		if err != nil {
			return nil, err
		}
		for _, k := range kids {
			if k.rec.ParentRunID == id {
				out = append(out, spawnEvent(k))
			}
		}
	}
	return out, nil
}

func scanCheckpoint(r *sql.Rows) (store.AgentEvent, bool, error) {
	var e store.AgentEvent
	var id string
	var rec []byte
	if err := r.Scan(&e.RowID, &e.RunID, &e.Step, &id, &rec); err != nil {
		return e, false, err
	}
	var c checkpointRec
	if !decode(rec, schemaCheckpoint, true, &c) {
		return e, false, nil
	}
	e.Kind, e.Detail = store.AgentCheckpoint, strings.TrimSpace(c.Node+" "+id)
	return e, true, nil
}

func spawnEvent(k runRow) store.AgentEvent {
	detail := "delegated"
	if k.rec.ParentTaskID != "" {
		detail += " task " + k.rec.ParentTaskID
	}
	return store.AgentEvent{RowID: k.rowid, RunID: k.rec.ParentRunID, Kind: store.AgentSpawn, ChildRunID: k.rec.RunID, Detail: detail}
}
