package opencode

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// turn is one assistant message: one model call, its text, its tool calls
// with their states, and the usage its step-finish part reported.
type turn struct {
	run, msgID string
	number     int
	rowid      int64 // the message's first part
	last       int64 // its newest part: the turn's row ids are made from it (rowID)
	live       bool  // unfinished and its session's last message: in flight
	msg        message
	prompt     string // the user's text that led to it
	text       strings.Builder
	thinking   strings.Builder
	tools      []toolPart
	finishes   []finish
	startAt    int64
}

type toolPart struct {
	rowid int64
	p     part
}

type finish struct {
	rowid int64
	at    int64
	p     part
}

// complete reports whether opencode has finished writing the message.
func (t *turn) complete() bool { return t.msg.Time.Completed != 0 || t.msg.Error != nil }

// A timeline row id is a part rowid shifted left by idShift, the low bits
// saying which row of the turn it is (doc.go: row ids). The part is the
// message's newest: a turn in flight has one row, below committedRows; the
// finished turn's rows are committedRows and up, the turn then its tools.
// opencode writes the step-finish part and then completes the message, so
// the finished turn's ids are above every id its flight showed, and a
// later turn's parts are newer still.
const (
	idShift       = 16
	committedRows = 1 << (idShift - 1)
)

func rowID(part int64, n int) int64 { return part<<idShift | int64(min(n, 1<<idShift-1)) }

// partOf is the part a row id was made from.
func partOf(id int64) int64 { return id >> idShift }

// turnRow and toolRow are the finished turn's row ids.
func (t *turn) turnRow() int64      { return rowID(t.last, committedRows) }
func (t *turn) toolRow(i int) int64 { return rowID(t.last, committedRows+1+i) }

// liveRow is the in-flight turn's row id: it grows with each new part,
// and with each step a tool part takes in place (pending, running, done),
// so a tail takes each new state of the turn as a newer row.
func (t *turn) liveRow() int64 {
	n := 0
	for _, c := range t.tools {
		switch c.p.State.Status {
		case "running":
			n++
		case "completed", "error":
			n += 2
		}
	}
	return rowID(t.last, min(n, committedRows-1))
}

// msgRow and partRow are rows as read, before the turns are put together.
type msgRow struct {
	rowid int64
	id    string
	m     message
	ok    bool
}

type partRow struct {
	rowid, created int64
	id, msg        string
	p              part
	ok             bool
}

func (s *Store) readMessages(ctx context.Context, where string, args ...any) ([]msgRow, error) {
	var out []msgRow
	err := s.eachRow(ctx, "SELECT rowid, id, data FROM message "+where, args, func(r *sql.Rows) error {
		var x msgRow
		var data []byte
		if err := r.Scan(&x.rowid, &x.id, &data); err != nil {
			return err
		}
		var err error
		if x.m, err = decodeMessage(data); err != nil {
			s.problem("message", x.id, x.rowid, err)
		} else {
			x.ok = true
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

// headCols is a part's data with its long texts cut to their heads, so a
// timeline reads no tool output whole: SQLite takes the fields out, and
// data that is not JSON comes through as it is, to be one problem.
var headCols = fmt.Sprintf(`CASE WHEN json_valid(data) THEN json_object(
	'type', json_extract(data, '$.type'), 'text', substr(json_extract(data, '$.text'), 1, %[1]d),
	'tool', json_extract(data, '$.tool'), 'callID', json_extract(data, '$.callID'), 'reason', json_extract(data, '$.reason'),
	'tokens', json_extract(data, '$.tokens'),
	'state', json_object('status', json_extract(data, '$.state.status'), 'input', substr(json_extract(data, '$.state.input'), 1, %[1]d),
		'output', substr(json_extract(data, '$.state.output'), 1, %[1]d), 'error', substr(json_extract(data, '$.state.error'), 1, %[1]d)))
	ELSE data END`, headBytes)

// headBytes is how much of a long text a timeline row needs.
const headBytes = 1024

// readParts reads parts whole, or (heads) with their long texts cut.
func (s *Store) readParts(ctx context.Context, heads bool, where string, args ...any) ([]partRow, error) {
	var out []partRow
	col := "data"
	if heads {
		col = headCols
	}
	err := s.eachRow(ctx, "SELECT rowid, id, message_id, time_created, "+col+" FROM part "+where, args, func(r *sql.Rows) error {
		var x partRow
		var data []byte
		if err := r.Scan(&x.rowid, &x.id, &x.msg, &x.created, &data); err != nil {
			return err
		}
		var err error
		if x.p, err = decodePart(data); err != nil {
			s.problem("part", x.id, x.rowid, err)
		} else {
			x.ok = true
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

// turns puts a session's messages (in order) and their parts together;
// first is the number the first assistant message gets.
func turns(run string, msgs []msgRow, parts []partRow, first int) []*turn {
	byMsg := map[string][]partRow{}
	for _, p := range parts {
		if p.ok {
			byMsg[p.msg] = append(byMsg[p.msg], p)
		}
	}
	var out []*turn
	prompt := ""
	n := first
	for i, m := range msgs {
		if !m.ok {
			continue
		}
		if m.m.Role == "user" {
			var b strings.Builder
			for _, p := range byMsg[m.id] {
				if p.p.Type == "text" {
					b.WriteString(p.p.Text)
				}
			}
			prompt = b.String()
			continue
		}
		if m.m.Role != "assistant" {
			continue
		}
		t := &turn{run: run, msgID: m.id, number: n, msg: m.m, prompt: prompt}
		// A message left unfinished under a later one (opencode stopped)
		// will not be finished: it reads as it stands.
		t.live = !t.complete() && i == len(msgs)-1
		n++
		prompt = ""
		for _, p := range byMsg[m.id] {
			if t.rowid == 0 {
				t.rowid, t.startAt = p.rowid, p.created
			}
			t.last = max(t.last, p.rowid)
			switch p.p.Type {
			case "text":
				t.text.WriteString(p.p.Text)
			case "reasoning":
				t.thinking.WriteString(p.p.Text)
			case "tool":
				t.tools = append(t.tools, toolPart{p.rowid, p.p})
			case "step-finish":
				t.finishes = append(t.finishes, finish{p.rowid, p.created, p.p})
			}
		}
		if t.rowid != 0 { // a message with no part yet has nothing to show
			out = append(out, t)
		}
	}
	return out
}

// sessionTurns reads a whole session's turns (heads: long texts cut).
func (s *Store) sessionTurns(ctx context.Context, runID string, heads bool) ([]*turn, error) {
	msgs, err := s.readMessages(ctx, "WHERE session_id = ? ORDER BY time_created, id", runID)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		if ok, err := s.hasSession(ctx, runID); err != nil || !ok {
			return nil, orNoRun(s.path, runID, err)
		}
	}
	parts, err := s.readParts(ctx, heads, "WHERE session_id = ? ORDER BY rowid", runID)
	if err != nil {
		return nil, err
	}
	return turns(runID, msgs, parts, 1), nil
}

// turnOf reads one assistant message's turn and no more of its session:
// its number is the assistant messages before it, its prompt the user
// message just before it (both through message_session_time_created_id_idx),
// its parts through part_message_id_id_idx.
func (s *Store) turnOf(ctx context.Context, run string, m msgRow, heads bool) (*turn, error) {
	before, err := s.readMessages(ctx, `WHERE session_id = ? AND (time_created, id) < (SELECT time_created, id FROM message WHERE id = ?)
		ORDER BY time_created DESC, id DESC LIMIT 1`, run, m.id)
	if err != nil {
		return nil, err
	}
	n, err := s.callsBefore(ctx, run, m.id)
	if err != nil {
		return nil, err
	}
	msgs := append(before, m)
	if len(before) > 0 && (!before[0].ok || before[0].m.Role != "user") {
		msgs = msgs[1:]
	}
	var parts []partRow
	for _, x := range msgs {
		p, err := s.readParts(ctx, heads, "WHERE message_id = ? ORDER BY rowid", x.id)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p...)
	}
	ts := turns(run, msgs, parts, n+1)
	if len(ts) == 0 {
		return nil, nil
	}
	t := ts[len(ts)-1]
	if t.live { // in flight only while it is the session's last message
		later := false
		err = s.eachRow(ctx, `SELECT EXISTS (SELECT 1 FROM message WHERE session_id = ? AND (time_created, id) > (SELECT time_created, id FROM message WHERE id = ?))`,
			[]any{run, m.id}, func(r *sql.Rows) error { return r.Scan(&later) })
		t.live = !later
	}
	return t, err
}

func (s *Store) hasSession(ctx context.Context, id string) (bool, error) {
	n := 0
	err := s.eachRow(ctx, "SELECT count(*) FROM session WHERE id = ?", []any{id}, func(r *sql.Rows) error { return r.Scan(&n) })
	return n > 0, err
}

func orNoRun(path, id string, err error) error {
	if err != nil {
		return err
	}
	return store.Errorf(path, store.ErrNoSuchRun, errNoRun, "%s", store.Because(store.ErrNoSuchRun, id))
}

// rows is the turn's timeline rows: the model turn, then each tool call;
// a turn in flight is one pending row saying what it is doing.
func (t *turn) rows() []store.StepRow {
	var tok int64
	for _, f := range t.finishes {
		if f.p.Tokens != nil {
			tok += f.p.Tokens.total()
		}
	}
	if t.live {
		r := store.StepRow{RowID: t.liveRow(), RunID: t.run, Number: t.number, Kind: store.StepTurn,
			Decision: t.decision(), ToolCall: store.CutBytes(t.calls(), 200), Tokens: tok, Pending: true}
		if n := len(t.tools); n > 0 {
			c := t.tools[n-1]
			r.Decision, r.ResultHead = toolStatus(c.p.State.Status)+" "+c.p.Tool, store.HeadLine(c.result(), 200)
		}
		return []store.StepRow{r}
	}
	out := []store.StepRow{{RowID: t.turnRow(), RunID: t.run, Number: t.number, Kind: store.StepTurn,
		Decision: t.decision(), ToolCall: store.CutBytes(t.calls(), 200), Tokens: tok}}
	for i, c := range t.tools {
		if c.rowid == t.rowid {
			// The message starts with the call (no step-start): one row.
			out[0].ResultHead = store.HeadLine(c.result(), 200)
			continue
		}
		out = append(out, store.StepRow{RowID: t.toolRow(i), RunID: t.run, Number: t.number, Kind: store.StepTurn,
			Decision: toolStatus(c.p.State.Status) + " " + c.p.Tool, ResultHead: store.HeadLine(c.result(), 200)})
	}
	return out
}

// result is the tool's output, or its error.
func (c toolPart) result() string {
	if c.p.State.Status == "error" {
		return c.p.State.Error
	}
	return c.p.State.Output
}

// toolStatus words a tool part's state: "result" once completed, else
// opencode's own word (pending, running, error).
func toolStatus(st string) string {
	if st == "completed" {
		return "result"
	}
	if st == "" {
		return "pending"
	}
	return st
}

func (t *turn) decision() string {
	if l := store.HeadLine(t.text.String(), 160); l != "" {
		return l
	}
	if len(t.tools) > 0 {
		names := make([]string, len(t.tools))
		for i, c := range t.tools {
			names[i] = c.p.Tool
		}
		return "calls " + strings.Join(names, ", ")
	}
	if t.msg.Error != nil {
		return "error: " + store.HeadLine(t.msg.Error.Data.Message, 160)
	}
	return ""
}

func (t *turn) calls() string {
	parts := make([]string, len(t.tools))
	for i, c := range t.tools {
		parts[i] = c.p.Tool + " " + c.p.input()
	}
	return strings.Join(parts, "; ")
}

func toSteps(ts []*turn) []store.Step {
	var out []store.Step
	for _, t := range ts {
		for _, r := range t.rows() {
			out = append(out, store.Step{RowID: r.RowID, RunID: r.RunID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
				ToolCall: r.ToolCall, ResultHead: r.ResultHead, Tokens: r.Tokens, Pending: r.Pending, At: millis(t.startAt)})
		}
	}
	return out
}

// Steps is the session's timeline: each model call, then its tool calls
// (a call still pending or running says so).
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	ts, err := s.sessionTurns(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	return toSteps(ts), nil
}

// StepDetail is everything about one row: a model turn's text, calls,
// results and provider call, or one tool call's input and output. Only
// the row's own message is read, whole.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	// One read at a time: the browsing connection is the only one.
	msgID := ""
	err := s.eachRow(ctx, "SELECT message_id FROM part WHERE rowid = ? AND session_id = ?", []any{partOf(rowID), runID},
		func(r *sql.Rows) error { return r.Scan(&msgID) })
	if err != nil {
		return store.StepDetail{}, err
	}
	msgs, err := s.readMessages(ctx, "WHERE id = ?", msgID)
	if err != nil {
		return store.StepDetail{}, err
	}
	if len(msgs) == 1 && msgs[0].ok {
		t, err := s.turnOf(ctx, runID, msgs[0], false)
		if err != nil {
			return store.StepDetail{}, err
		}
		if t != nil {
			steps := toSteps([]*turn{t})
			for _, st := range steps {
				if st.RowID == rowID {
					return t.detail(st), nil
				}
			}
			// The turn's row from when it was in flight, or from an
			// earlier moment of its flight, names the turn as it is now.
			if rowID&committedRows == 0 {
				return t.detail(steps[0]), nil
			}
		}
	}
	if ok, err := s.hasSession(ctx, runID); err != nil || !ok {
		return store.StepDetail{}, orNoRun(s.path, runID, err)
	}
	return store.StepDetail{}, store.Errorf(s.path, store.ErrNotFound, nil, "session %s has no step row %d", runID, rowID)
}

func (t *turn) detail(st store.Step) store.StepDetail {
	d := store.StepDetail{Step: st}
	set := func(name string, dst *string, v string) {
		if len(v) > store.MaxDetailBytes {
			v = store.CutBytes(v, store.MaxDetailBytes)
			d.Truncated = append(d.Truncated, name)
		}
		*dst = v
	}
	if !t.live && st.RowID != t.turnRow() {
		for i, c := range t.tools {
			if t.toolRow(i) == st.RowID {
				set("tool call", &d.ToolCallFull, c.p.Tool+" "+c.p.input())
				set("result", &d.Result, c.result())
				d.Tools = []store.ToolCall{{ID: c.p.CallID, Name: c.p.Tool, Arguments: c.p.input()}}
			}
		}
		return d
	}
	text := t.text.String()
	if th := t.thinking.String(); th != "" {
		text = "[thinking]\n" + th + "\n[/thinking]\n" + text
	}
	set("turn", &d.TurnText, text)
	d.HasTurnText = text != ""
	set("prompt", &d.Prompt, t.prompt)
	set("tool call", &d.ToolCallFull, t.calls())
	var res []string
	for _, c := range t.tools {
		d.Tools = append(d.Tools, store.ToolCall{ID: c.p.CallID, Name: c.p.Tool, Arguments: c.p.input()})
		res = append(res, fmt.Sprintf("%s %s: %s", toolStatus(c.p.State.Status), c.p.Tool, c.result()))
	}
	set("result", &d.Result, strings.Join(res, "\n"))
	d.ProviderCalls = t.providerCalls()
	return d
}

// providerCalls is one call per step-finish part, in the provider's own
// figures (records.go: tokens).
func (t *turn) providerCalls() []store.ProviderCall {
	var out []store.ProviderCall
	for i, f := range t.finishes {
		c := store.ProviderCall{RowID: f.rowid, RunID: t.run, Step: t.number, Attempt: i + 1, Provider: t.msg.ProviderID,
			Model: t.msg.ModelID, FinishReason: f.p.Reason, At: millis(f.at)}
		if f.at >= t.startAt && t.startAt > 0 {
			c.LatencyMS = f.at - t.startAt
		}
		if k := f.p.Tokens; k != nil {
			c.PromptTokens, c.CompletionTokens, c.TotalTokens = ptr(k.prompt()), ptr(k.completion()), ptr(k.total())
			c.CacheReadTokens, c.CacheWriteTokens, c.ReasoningTokens = ptr(k.Cache.Read), ptr(k.Cache.Write), ptr(k.Reasoning)
		}
		out = append(out, c)
	}
	if len(out) == 0 && t.msg.Error != nil {
		out = append(out, store.ProviderCall{RowID: t.rowid, RunID: t.run, Step: t.number, Attempt: 1, Provider: t.msg.ProviderID,
			Model: t.msg.ModelID, Failure: store.HeadLine(t.msg.Error.Name+": "+t.msg.Error.Data.Message, 200), At: millis(t.msg.Time.Created)})
	}
	return out
}

// contextSamples is the prompt size the provider reported for each call;
// opencode keeps no estimate of its own.
func (t *turn) contextSamples() []store.ContextSample {
	var out []store.ContextSample
	for _, c := range t.providerCalls() {
		if c.PromptTokens != nil {
			out = append(out, store.ContextSample{RowID: c.RowID, RunID: t.run, Step: t.number, NoEstimate: true, Reported: c.PromptTokens})
		}
	}
	return out
}

func ptr(v int64) *int64 { return &v }

// ProviderCalls are the session's model calls with the usage each reported.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	ts, err := s.sessionTurns(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	var out []store.ProviderCall
	for _, t := range ts {
		out = append(out, t.providerCalls()...)
	}
	return out, nil
}

// ContextSamples are the prompt sizes the provider reported, per call.
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	ts, err := s.sessionTurns(ctx, runID, true)
	if err != nil {
		return nil, err
	}
	var out []store.ContextSample
	for _, t := range ts {
		out = append(out, t.contextSamples()...)
	}
	return out, nil
}

// numbered is where a session's model calls were last numbered: a
// message, its time, how many assistant messages come before it and
// whether it is one.
type numbered struct {
	id        string
	created   int64
	before    int
	assistant bool
}

// callsBefore is how many assistant messages of the session come before
// message id (its step is the next number). Counting reads every earlier
// message's data, so the count is kept from the session's last numbered
// message and only the messages since are read, while that message is
// still there at its time: opencode deletes messages only as a session's
// newest ones (a revert's cleanup), which takes it too. An earlier
// message is counted whole.
func (s *Store) callsBefore(ctx context.Context, run, id string) (int, error) {
	var created int64
	var assistant, found bool
	err := s.eachRow(ctx, `SELECT time_created, json_valid(data) AND json_extract(data, '$.role') IS 'assistant' FROM message WHERE id = ?`,
		[]any{id}, func(r *sql.Rows) error {
			found = true
			return r.Scan(&created, &assistant)
		})
	if err != nil || !found {
		return 0, err
	}
	s.mu.Lock()
	mark, ok := s.numberedAt[run]
	s.mu.Unlock()
	after := ok && (created > mark.created || created == mark.created && id > mark.id)
	n, counted := 0, false
	if ok && (after || id == mark.id) {
		var still bool
		var since int
		err := s.eachRow(ctx, `SELECT EXISTS (SELECT 1 FROM message WHERE id = ? AND session_id = ? AND time_created = ?),
			(SELECT count(*) FROM message WHERE session_id = ? AND (time_created, id) > (?, ?) AND (time_created, id) < (?, ?)
				AND json_valid(data) AND json_extract(data, '$.role') = 'assistant')`,
			[]any{mark.id, run, mark.created, run, mark.created, mark.id, created, id}, func(r *sql.Rows) error { return r.Scan(&still, &since) })
		if err != nil {
			return 0, err
		}
		if still {
			n, counted = mark.before, true
			if after {
				n += since
				if mark.assistant {
					n++
				}
			}
		}
	}
	if !counted {
		err := s.eachRow(ctx, `SELECT count(*) FROM message WHERE session_id = ? AND (time_created, id) < (?, ?)
			AND json_valid(data) AND json_extract(data, '$.role') = 'assistant'`, []any{run, created, id}, func(r *sql.Rows) error { return r.Scan(&n) })
		if err != nil {
			return 0, err
		}
	}
	if !ok || after || id == mark.id {
		s.mu.Lock()
		s.numberedAt[run] = numbered{id: id, created: created, before: n, assistant: assistant}
		s.mu.Unlock()
	}
	return n, nil
}
