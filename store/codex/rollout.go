package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// line is one rollout line: codex-rs/protocol's RolloutLine, a timestamp
// and a RolloutItem tagged by "type" with its body in "payload".
type line struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// payload is the union of the payload fields vigil reads; a record's
// "type" inside the payload (ResponseItem and EventMsg are tagged too)
// says which apply.
type payload struct {
	Type string `json:"type"`

	// session_meta (SessionMeta)
	ID             string `json:"id"`
	ParentThreadID string `json:"parent_thread_id"`
	Timestamp      string `json:"timestamp"`
	Cwd            string `json:"cwd"`
	ModelProvider  string `json:"model_provider"`
	AgentNickname  string `json:"agent_nickname"`
	// SessionSource: a word ("exec", "cli") or {"subagent": ...}
	Source json.RawMessage `json:"source"`

	// turn_context
	Model string `json:"model"`

	// response_item: message, function_call, custom_tool_call, *_output
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`

	// token_usage_record (one model response's usage) and event_msg
	// token_count (TokenCountEvent: info.total_token_usage is the thread's
	// running sum, info.last_token_usage the newest response's)
	Usage *usage `json:"usage"`
	Info  *struct {
		Total  *usage `json:"total_token_usage"`
		Last   *usage `json:"last_token_usage"`
		Window *int64 `json:"model_context_window"`
	} `json:"info"`

	// event_msg task_complete / turn_aborted
	DurationMS  *int64 `json:"duration_ms"`
	CompletedAt int64  `json:"completed_at"`
	Reason      string `json:"reason"`
}

// usage is codex-rs/protocol's TokenUsage as written: input_tokens counts
// the whole prompt, cached_input_tokens the part of it read from cache.
type usage struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
	Total      int64 `json:"total_tokens"`
}

// read reports a record vigil reads: only those are decoded whole, so a
// record of another kind (there are many, and they change) can never make
// a line unreadable.
func read(kind string, raw json.RawMessage) bool {
	var head struct {
		Type string `json:"type"`
	}
	switch kind {
	case "session_meta", "turn_context", "token_usage_record":
		return true
	case "response_item", "event_msg":
		// serde writes an internally tagged enum's tag first: read it
		// without scanning a payload that may hold megabytes of output.
		if t, ok := leadingType(raw); ok {
			head.Type = t
		} else if json.Unmarshal(raw, &head) != nil {
			return true // and fail: the line is damaged
		}
	}
	switch head.Type {
	case "message", "function_call", "custom_tool_call", "local_shell_call", "function_call_output",
		"custom_tool_call_output", "local_shell_call_output", "reasoning",
		"task_started", "task_complete", "turn_aborted", "token_count":
		return true
	}
	return false
}

// decodeLine decodes a rollout line, and its payload when it is a record
// vigil reads (read). A line laid out as serde writes it (its timestamp,
// ordinal and type before its payload) is routed by those keys: a record
// vigil reads is decoded once, into its payload's fields, and any other is
// only checked to be JSON. Another layout is decoded in two steps.
func decodeLine(raw []byte) (line, payload, error) {
	var p payload
	if ts, kind, body, ok := lineHead(raw); ok {
		if !read(kind, body) {
			if json.Valid(raw) {
				return line{Timestamp: ts, Type: kind}, p, nil
			}
		} else {
			whole := struct {
				Timestamp string  `json:"timestamp"`
				Type      string  `json:"type"`
				Payload   payload `json:"payload"`
			}{}
			if err := json.Unmarshal(raw, &whole); err == nil {
				return line{Timestamp: whole.Timestamp, Type: whole.Type}, whole.Payload, nil
			}
		}
		// Damaged or odd: the two-step decode says what is wrong.
	}
	return decodeTwice(raw)
}

// decodeTwice decodes the line, then its payload when vigil reads it.
func decodeTwice(raw []byte) (line, payload, error) {
	var p payload
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return l, p, err
	}
	if read(l.Type, l.Payload) {
		if err := json.Unmarshal(l.Payload, &p); err != nil {
			return l, p, err
		}
	}
	return l, p, nil
}

// lineHead reads the keys serde writes before a RolloutLine's payload,
// {"timestamp":"…","ordinal":N,"type":"…","payload": (ordinal optional),
// without decoding the line. ok is false for any other layout.
func lineHead(raw []byte) (ts, kind string, body []byte, ok bool) {
	quoted := func(b []byte) (string, []byte, bool) {
		end := bytes.IndexAny(b, `"\`)
		if end < 0 || b[end] != '"' {
			return "", nil, false
		}
		return string(b[:end]), b[end+1:], true
	}
	rest, ok := bytes.CutPrefix(raw, []byte(`{"timestamp":"`))
	if !ok {
		return "", "", nil, false
	}
	if ts, rest, ok = quoted(rest); !ok {
		return "", "", nil, false
	}
	if r, ok := bytes.CutPrefix(rest, []byte(`,"ordinal":`)); ok {
		n := 0
		for n < len(r) && r[n] >= '0' && r[n] <= '9' {
			n++
		}
		rest = r[n:]
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"type":"`)); !ok {
		return "", "", nil, false
	}
	if kind, rest, ok = quoted(rest); !ok {
		return "", "", nil, false
	}
	if body, ok = bytes.CutPrefix(rest, []byte(`,"payload":`)); !ok {
		return "", "", nil, false
	}
	return ts, kind, body, true
}

// leadingType is the value of a leading "type" key of a JSON object.
func leadingType(raw json.RawMessage) (string, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(raw, " \t"), []byte(`{"type":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexAny(rest, `"\`)
	if end < 0 || rest[end] != '"' {
		return "", false
	}
	return string(rest[:end]), true
}

type spawnSource struct {
	ParentThreadID string `json:"parent_thread_id"`
	Depth          int    `json:"depth"`
}

// threadSpawn is a sub-agent's SessionSource::SubAgent(ThreadSpawn{..}).
func threadSpawn(raw json.RawMessage) *spawnSource {
	var src struct {
		Subagent struct {
			ThreadSpawn *spawnSource `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if json.Unmarshal(raw, &src) != nil {
		return nil
	}
	return src.Subagent.ThreadSpawn
}

// call is one tool call of a model turn.
type call struct {
	id, name, args string
}

// turn is one model response: what it said, the calls it made, and the
// usage Codex recorded for it. Its row is the rollout line it starts on;
// its timeline row ids are made from it (stepID, pendingID).
type turn struct {
	row       int64
	number    int
	calls     []call
	text      string
	usage     *usage
	useRow    int64 // the line the usage came on
	at        time.Time
	model     string
	window    *int64
	closed    bool // a usage record or the next turn ended it
	sent      bool // its row was handed out by Changes
	heldSent  bool // its pending placeholder was
	usageSent bool // its provider call and context sample were
}

// result is a tool call's output, joined to its call by call id.
type result struct {
	row  int64
	text string
}

// session is what one rollout says so far. The same fold serves a whole
// read and the tail: Changes keeps one per file in its cursor, trimmed of
// the turns it has handed out.
type session struct {
	id, parent, nickname, cwd, provider, model, goal string
	depth                                            int
	started                                          time.Time
	status                                           store.Status
	outcome                                          store.Outcome
	finished                                         time.Time
	duration                                         *time.Duration
	cumulative                                       *int64 // the newest total_token_usage.total_tokens
	window                                           *int64

	lines      int64 // whole lines folded
	numbers    int   // turns started
	turns      []turn
	results    map[string]result
	spawns     []spawn
	spawnsSent int
	dirty      bool // the run's own fields moved since the last Changes
	// statusSeen says a task event was read (a tail read takes the
	// status from it).
	statusSeen bool
}

// spawn is a sub-agent this session started (its spawn_agent result names
// the child's thread id).
type spawn struct {
	row   int64
	step  int
	child string
}

func newSession() *session {
	return &session{results: map[string]result{}, status: store.StatusRunning}
}

// clone is a copy a Changes call may advance without touching the cursor
// it was given.
func (s *session) clone() *session {
	c := *s
	c.turns = append([]turn(nil), s.turns...)
	for i := range c.turns {
		c.turns[i].calls = append([]call(nil), s.turns[i].calls...)
	}
	c.results = make(map[string]result, len(s.results))
	for k, v := range s.results {
		c.results[k] = v
	}
	c.spawns = append([]spawn(nil), s.spawns...)
	return &c
}

// fold reads one whole line (without its newline). A line that is not a
// rollout record returns an error and changes nothing but the line count.
func (s *session) fold(raw []byte) error {
	s.lines++
	row := s.lines
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	l, p, err := decodeLine(raw)
	if err != nil {
		return err
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	switch l.Type {
	case "session_meta":
		if s.id != "" { // a resumed or forked rollout repeats it: the first says who this is
			return nil
		}
		s.id, s.parent, s.cwd, s.provider, s.nickname = p.ID, p.ParentThreadID, p.Cwd, p.ModelProvider, p.AgentNickname
		if ts := threadSpawn(p.Source); ts != nil {
			s.depth = ts.Depth
			if s.parent == "" {
				s.parent = ts.ParentThreadID
			}
		}
		s.started, _ = time.Parse(time.RFC3339Nano, p.Timestamp)
		if s.started.IsZero() {
			s.started = at
		}
		s.dirty = true
	case "turn_context":
		if p.Model != "" && p.Model != s.model {
			s.model, s.dirty = p.Model, true
		}
	case "response_item":
		s.item(row, at, &p)
	case "token_usage_record":
		if p.Usage != nil {
			s.used(row, at, p.Usage, true)
		}
	case "event_msg":
		s.event(row, at, &p)
	}
	return nil
}

func (s *session) item(row int64, at time.Time, p *payload) {
	switch p.Type {
	case "message":
		switch p.Role {
		case "assistant":
			t := s.open(row, at)
			t.text = joinText(t.text, contentText(p.Content))
		case "user":
			s.closeOpen()
			text := contentText(p.Content)
			// Codex wraps what it injects (environment, notifications,
			// instructions) in a tag; the person's prompt is plain text.
			if s.goal == "" && text != "" && !strings.HasPrefix(strings.TrimSpace(text), "<") {
				s.goal, s.dirty = text, true
			}
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		t := s.open(row, at)
		args := p.Arguments
		if args == "" {
			args = p.Input
		}
		name := p.Name
		if p.Namespace != "" {
			name = p.Namespace + "." + name
		}
		if name == "" {
			name = p.Type
		}
		t.calls = append(t.calls, call{id: p.CallID, name: name, args: capText(args)})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		text := outputText(p.Output)
		s.results[p.CallID] = result{row: row, text: capText(text)}
		if child := spawnedChild(text); child != "" {
			s.spawns = append(s.spawns, spawn{row: row, step: s.numbers, child: child})
		}
	case "reasoning":
		s.open(row, at)
	}
}

func (s *session) event(row int64, at time.Time, p *payload) {
	switch p.Type {
	case "task_started", "task_complete", "turn_aborted":
		s.statusSeen = true
	}
	switch p.Type {
	case "task_started":
		if s.status != store.StatusRunning || s.outcome != "" {
			s.status, s.outcome, s.dirty = store.StatusRunning, "", true
		}
	case "task_complete":
		s.closeOpen()
		s.status, s.outcome, s.finished, s.dirty = store.StatusCompleted, store.OutcomeComplete, at, true
		if p.CompletedAt > 0 {
			s.finished = time.Unix(p.CompletedAt, 0).UTC()
		}
		if p.DurationMS != nil {
			d := time.Duration(*p.DurationMS) * time.Millisecond
			s.duration = &d
		}
	case "turn_aborted":
		s.closeOpen()
		s.status, s.outcome, s.finished, s.dirty = store.StatusCompleted, store.Outcome("aborted"), at, true
		if p.Reason != "" {
			s.outcome = store.Outcome("aborted: " + p.Reason)
		}
	case "token_count":
		if p.Info == nil {
			return // no usage yet (rate limits only)
		}
		if p.Info.Total != nil {
			v := p.Info.Total.Total
			s.cumulative, s.dirty = &v, true
		}
		if p.Info.Window != nil {
			s.window = p.Info.Window
		}
		if p.Info.Last != nil {
			s.used(row, at, p.Info.Last, false)
		}
	}
}

// used gives the newest turn its usage. A token_usage_record is written
// with its response; a token_count's last_token_usage is the same figures
// again (or the only ones, from a Codex that writes no usage records), so
// it is taken only by a turn that has none.
func (s *session) used(row int64, at time.Time, u *usage, record bool) {
	t := s.last()
	switch {
	case !record && (t == nil || t.closed || t.usage != nil):
		if t != nil && t.usage != nil {
			t.window = s.window
		}
		return
	case record && (t == nil || t.closed):
		t = s.start(row, at) // a response with no items
	}
	v := *u
	t.usage, t.useRow, t.window, t.closed = &v, row, s.window, true
}

// open is the turn the model is writing now, started at row if none is.
func (s *session) open(row int64, at time.Time) *turn {
	if t := s.last(); t != nil && !t.closed {
		return t
	}
	return s.start(row, at)
}

func (s *session) start(row int64, at time.Time) *turn {
	s.numbers++
	s.turns = append(s.turns, turn{row: row, number: s.numbers, at: at, model: s.model})
	return &s.turns[len(s.turns)-1]
}

func (s *session) last() *turn {
	if len(s.turns) == 0 {
		return nil
	}
	return &s.turns[len(s.turns)-1]
}

func (s *session) closeOpen() {
	if t := s.last(); t != nil {
		t.closed = true
	}
}

// pending reports whether a call of t has no result yet: the tool is
// running (or its process died; the rollout cannot tell which).
func (s *session) pending(t *turn) bool {
	for _, c := range t.calls {
		if _, ok := s.results[c.id]; !ok {
			return true
		}
	}
	return false
}

// A turn's committed row id is twice the line it starts on, and the
// placeholder shown while its call runs is the odd id just before: every
// earlier turn's ids are smaller, and the committed row, coming later with
// the larger id, replaces the placeholder in a timeline that folds rows
// past the largest id it has seen (store.AppendStepRows).
func (t *turn) stepID() int64    { return 2 * t.row }
func (t *turn) pendingID() int64 { return 2*t.row - 1 }

// held reports whether turn i is in flight with a call running: not
// committed, so its placeholder stands for it in the timeline.
func (ses *session) held(i int) bool {
	return !ses.committed(i) && ses.pending(&ses.turns[i])
}

// contentText is a message's text parts, joined.
func contentText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// outputText is a tool output: a string, or FunctionCallOutputPayload's
// structured form ({"content": ...} or content items), as text.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Content) > 0 {
		if json.Unmarshal(obj.Content, &s) == nil {
			return s
		}
		if t := contentText(obj.Content); t != "" {
			return t
		}
	}
	if t := contentText(raw); t != "" {
		return t
	}
	return string(raw)
}

// spawnedChild is the thread id a spawn_agent result names.
func spawnedChild(out string) string {
	if !strings.Contains(out, `"agent_id"`) {
		return ""
	}
	var v struct {
		AgentID string `json:"agent_id"`
	}
	if json.Unmarshal([]byte(out), &v) != nil {
		return ""
	}
	return v.AgentID
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n" + b
}

func capText(s string) string {
	if len(s) > store.MaxDetailBytes {
		return s[:store.MaxDetailBytes]
	}
	return s
}
