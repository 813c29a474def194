package claudecode

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vigil-run/vigil/store"
)

// record is the part of a transcript line vigil reads.
type record struct {
	Type      string `json:"type"`
	IsMeta    bool   `json:"isMeta"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Message   *struct {
		ID         string          `json:"id"`
		Model      string          `json:"model"`
		StopReason *string         `json:"stop_reason"`
		Content    json.RawMessage `json:"content"`
		Usage      *usage          `json:"usage"`
	} `json:"message"`
}

type usage struct {
	Input      *int64 `json:"input_tokens"`
	Output     *int64 `json:"output_tokens"`
	CacheRead  *int64 `json:"cache_read_input_tokens"`
	CacheWrite *int64 `json:"cache_creation_input_tokens"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Text      string          `json:"text"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// turn is one model turn: the assistant lines of one message (Claude Code
// writes a line per content block, each repeating the message's usage, so
// the usage is the turn's once), with its tool calls and their results.
type turn struct {
	number int
	row    int64 // openRow of its first line: its placeholder's row id while it runs
	commit int64 // commitRow of the line after which it was complete; 0 while open
	msgID  string
	model  string
	stop   string
	at     time.Time
	usage  *usage
	text   string
	prompt string
	calls  []call
	closed bool // a line of something else followed: no block of it comes any more
}

type call struct {
	id, name, args string
	result         string
	hasResult      bool
	isError        bool
}

// running reports a turn with a call still waiting for its result.
func (t *turn) running() bool {
	for _, c := range t.calls {
		if !c.hasResult {
			return true
		}
	}
	return false
}

// done reports a turn nothing more will be added to but its results, and
// those are in.
func (t *turn) done() bool {
	return (t.closed || (t.stop != "" && t.stop != "tool_use" && len(t.calls) == 0)) && !t.running()
}

func (t *turn) clone() *turn {
	c := *t
	c.calls = append([]call(nil), t.calls...)
	return &c
}

// A turn has two row ids, so that a tail sees them grow: its placeholder's
// (from its first line) while in flight, then its committed row's (from
// the line that completed it), which replaces the placeholder. Both come
// from line numbers, doubled so that a turn completed only by the next
// turn's first line still commits before that turn's placeholder.
func openRow(line int64) int64   { return 2 * line }
func commitRow(line int64) int64 { return 2*line + 1 }

// lineOf is the line a row id was made from.
func lineOf(row int64) int64 { return row / 2 }

// problem is a line that does not decode.
type problem struct {
	line int64
	err  error
}

// fold reads a transcript a line at a time into turns. It holds only the
// turn still being written; keep caps the texts it holds (a cursor's fold
// carries heads, a read for the detail pane carries them whole).
type fold struct {
	lines  int64
	turns  int
	open   *turn
	prompt string
	keep   int
	// counting: a fold for counts alone (RunStats), which takes a line
	// whose top-level type is neither assistant nor user for what it is
	// without decoding it. Most of a transcript's bytes are such lines
	// (attachments, request shapes); a malformed one among them is
	// reported where the lines are shown, not by a count.
	counting bool
}

// otherLine says whether a line's top-level type is a string other than
// assistant or user, read without decoding the rest of the line.
func otherLine(line []byte) bool {
	t := gjson.GetBytes(line, "type")
	return t.Type == gjson.String && t.Str != "assistant" && t.Str != "user"
}

func (f fold) clone() fold {
	if f.open != nil {
		f.open = f.open.clone()
	}
	return f
}

// feed reads one complete line (without its newline); emit gets each turn
// as it completes.
func (f *fold) feed(line []byte, emit func(*turn)) *problem {
	f.lines++
	n := f.lines
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if f.counting && otherLine(line) {
		if f.open != nil {
			f.open.closed = true
			if f.open.done() {
				f.flush(n, emit)
			}
		}
		return nil
	}
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return &problem{line: n, err: err}
	}
	if r.Type == "assistant" && r.Message != nil {
		if f.open == nil || f.open.closed || f.open.msgID != r.Message.ID {
			f.flush(n-1, emit)
			f.turns++
			f.open = &turn{number: f.turns, row: openRow(n), msgID: r.Message.ID, prompt: f.prompt}
			f.prompt = ""
		}
		f.addAssistant(f.open, &r)
	} else {
		if f.open != nil {
			f.open.closed = true
		}
		if r.Type == "user" && r.Message != nil {
			f.addUser(&r)
		}
	}
	if f.open != nil && f.open.done() {
		f.flush(n, emit)
	}
	return nil
}

// flush commits the open turn as it is after line n: its results are in,
// or a new turn began at the next line without them (never written).
func (f *fold) flush(n int64, emit func(*turn)) {
	if f.open != nil {
		f.open.commit = commitRow(n)
		emit(f.open)
		f.open = nil
	}
}

func (f *fold) addAssistant(t *turn, r *record) {
	m := r.Message
	t.model = cmpOr(m.Model, t.model)
	if m.StopReason != nil {
		t.stop = *m.StopReason
	}
	if m.Usage != nil {
		t.usage = m.Usage
	}
	if ts, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil {
		t.at = ts
	}
	var blocks []block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			t.text = f.cap(t.text + b.Text)
		case "tool_use":
			t.calls = append(t.calls, call{id: b.ID, name: b.Name, args: f.cap(string(b.Input))})
		}
	}
}

func (f *fold) addUser(r *record) {
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		if !r.IsMeta {
			f.prompt = f.cap(s)
		}
		return
	}
	var blocks []block
	if json.Unmarshal(r.Message.Content, &blocks) != nil || f.open == nil {
		return
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		for i := range f.open.calls {
			if c := &f.open.calls[i]; c.id == b.ToolUseID {
				c.result, c.hasResult, c.isError = f.cap(resultText(b.Content)), true, b.IsError
			}
		}
	}
}

func (f *fold) cap(s string) string {
	if f.keep > 0 && len(s) > f.keep {
		return s[:f.keep]
	}
	return s
}

// resultText is a tool result's text: a string, or its text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// total is the turn's four figures summed; nil when it reported none.
func (u *usage) total() *int64 {
	if u == nil {
		return nil
	}
	var t int64
	any := false
	for _, p := range []*int64{u.Input, u.Output, u.CacheRead, u.CacheWrite} {
		if p != nil {
			t += *p
			any = true
		}
	}
	if !any {
		return nil
	}
	return &t
}

// contextSize is what the turn's prompt held, as reported: input plus cache
// read and written.
func (u *usage) contextSize() *int64 {
	if u == nil || u.Input == nil {
		return nil
	}
	t := *u.Input
	for _, p := range []*int64{u.CacheRead, u.CacheWrite} {
		if p != nil {
			t += *p
		}
	}
	return &t
}

// stepRow is the timeline row of a turn: committed, or its placeholder
// while open.
func (t *turn) stepRow(runID string) store.StepRow {
	r := store.StepRow{RowID: t.commit, RunID: runID, Number: t.number, Decision: t.stop}
	if t.commit == 0 {
		r.RowID, r.Pending = t.row, true
	}
	var names []string
	for _, c := range t.calls {
		names = append(names, c.name+" "+oneLine(c.args, 120))
		if r.ResultHead == "" && c.hasResult {
			r.ResultHead = oneLine(c.result, 120)
		}
	}
	r.ToolCall = strings.Join(names, "; ")
	if t.running() || (r.Pending && r.Decision == "") {
		r.Decision = "running"
	}
	if r.ResultHead == "" && len(t.calls) == 0 {
		r.ResultHead = oneLine(t.text, 120)
	}
	if tot := t.usage.total(); tot != nil {
		r.Tokens = *tot
	}
	return r
}

func (t *turn) step(runID string) store.Step {
	r := t.stepRow(runID)
	return store.Step{RowID: r.RowID, RunID: runID, Number: r.Number, Decision: r.Decision, ToolCall: r.ToolCall,
		ResultHead: r.ResultHead, Tokens: r.Tokens, Pending: r.Pending, At: t.at}
}

// providerCall is the turn's model call. Its row id is the turn's first
// line's, whether it runs or is committed: the same call read twice
// replaces itself.
func (t *turn) providerCall(runID string) store.ProviderCall {
	p := store.ProviderCall{RowID: t.row, RunID: runID, Step: t.number, Attempt: 1, Provider: "anthropic", Model: t.model,
		FinishReason: t.stop, At: t.at}
	if u := t.usage; u != nil {
		p.PromptTokens, p.CompletionTokens, p.CacheReadTokens, p.CacheWriteTokens = u.Input, u.Output, u.CacheRead, u.CacheWrite
		p.TotalTokens = u.total()
	}
	return p
}

func (t *turn) contextSample(runID string) store.ContextSample {
	return store.ContextSample{RowID: t.row, RunID: runID, Step: t.number, NoEstimate: true, Reported: t.usage.contextSize()}
}

// oneLine is s's first line, cut to n bytes.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n]
	}
	return s
}
