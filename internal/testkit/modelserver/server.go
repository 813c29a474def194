// Package modelserver is a scripted model server for tests: it speaks the
// four wire protocols the agent CLIs call (Anthropic Messages, OpenAI
// Responses, OpenAI-compatible chat completions, Gemini generateContent),
// on 127.0.0.1 only, and answers each conversation with the turns a test
// scripted: text, tool calls, a failure, a delay, usage figures reported
// exactly as given. It records every request so a test can assert what the
// CLI sent back (tool results above all).
//
// The server keeps no conversation state: which turn a request asks for is
// the one after the latest of the server's own replies in its history, so
// a retry after a failure asks for the same turn again, and a sub-agent's
// requests (whose history starts with their own prompt) are told apart
// from their parent's by the Match each conversation names. The texts of
// one conversation's turns must differ.
package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Usage is what a turn reports, as the protocol carries it: OpenAI and
// Gemini count cached tokens inside the input (the server sends Input as
// is), and only Anthropic carries CacheWrite.
type Usage struct{ Input, Output, CacheRead, CacheWrite int }

// Call is one tool call: the tool's name as the CLI offers it (Bash,
// exec_command, run_shell_command, bash, Agent, spawn_agent, task…) and
// its arguments, marshalled to JSON.
type Call struct {
	Name string
	Args any
	// Namespace is the Responses API's tool namespace (Codex's
	// multi_agent_v1 tools carry one).
	Namespace string
	// ArgsFrom, when set, makes the arguments from the request's history:
	// for a call that names what an earlier call returned (Codex's
	// wait_agent names the agent spawn_agent started).
	ArgsFrom func(history []Item) any
}

// Failure makes a turn fail Times times (1 when 0) before it is served:
// with Status an HTTP error, without it an error event once the stream
// has started.
type Failure struct {
	Status  int
	Times   int
	Message string
}

// Turn is one model turn: Text, or Calls (with optional Text before them).
type Turn struct {
	Text  string
	Calls []Call
	Usage Usage
	Delay time.Duration // before the reply is written
	Fail  *Failure
}

// Conversation is the turns of one agent: its requests are those whose
// first user text containing any conversation's Match contains this one's.
type Conversation struct {
	Match string
	Turns []Turn
}

// Script is what the server answers: one Conversation per agent.
type Script []Conversation

// Item is one entry of a request's history, the same for every protocol.
type Item struct {
	Role   string // "user", "model" or "tool" (a tool's result)
	Text   string // text, or a tool call's JSON arguments, or a result
	CallID string // a tool call's or result's id
	Name   string // a tool call's (or Gemini result's) tool name
}

// Request is one request the server got.
type Request struct {
	Protocol     string // "anthropic", "responses", "chat", "gemini", or "" (unknown path)
	Method, Path string
	Body         []byte
	Items        []Item
	Tools        int // tools the request offered
	Conversation int // index in the Script, -1 for a side request
	Turn         int // the turn served, -1 for a side request
	CallIDs      []string
	At           time.Time // when it arrived
}

// parsed is what a protocol reads from a request body.
type parsed struct {
	model  string
	stream bool
	tools  int
	json   bool // asks for a JSON object (Gemini's router and next-speaker check)
	count  bool // asks only for a token count
	items  []Item
}

// reply is what a protocol writes: a turn with its call ids chosen.
type reply struct {
	Turn
	model   string
	ids     []string
	failMid string // an error event after the stream started
}

// protocol is one wire protocol: how it reads a request and writes a reply.
type protocol struct {
	name   string
	prefix string // call ids: "toolu_" or "call_"
	parse  func(r *http.Request, body []byte) (parsed, error)
	write  func(w http.ResponseWriter, p parsed, rep reply)
	fail   func(w http.ResponseWriter, status int, msg string)
}

// Server is a running model server.
type Server struct {
	URL    string // http://127.0.0.1:PORT
	script Script

	mu       sync.Mutex
	requests []Request
	failed   map[[2]int]int
	srv      *http.Server
}

// Start runs a server for script until the test ends.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + l.Addr().String(), script: script, failed: map[[2]int]int{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(l)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// Requests is a copy of every request so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ToolResult is the first result the CLI sent back for the call id, as
// text.
func (s *Server) ToolResult(callID string) (string, bool) {
	for _, r := range s.Requests() {
		for _, it := range r.Items {
			if it.Role == "tool" && it.CallID == callID {
				return it.Text, true
			}
		}
	}
	return "", false
}

// Served lists the call ids the server handed out, in order.
func (s *Server) Served() []string {
	var ids []string
	for _, r := range s.Requests() {
		ids = append(ids, r.CallIDs...)
	}
	return ids
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, Body: body, Conversation: -1, Turn: -1, At: time.Now()}
	p, ok := route(r)
	if !ok {
		s.record(rec)
		s.other(w, r)
		return
	}
	rec.Protocol = p.name
	in, err := p.parse(r, body)
	if err != nil {
		s.record(rec)
		p.fail(w, http.StatusBadRequest, "modelserver: "+err.Error())
		return
	}
	rec.Items, rec.Tools = in.items, in.tools
	rep := reply{model: in.model}
	conv := s.conversation(in)
	if conv < 0 || in.count {
		rep.Text = sideText(in)
		s.record(rec)
		p.write(w, in, rep)
		return
	}
	turns := s.script[conv].Turns
	rec.Conversation, rec.Turn = conv, s.turnOf(conv, p.prefix, in.items)
	if rec.Turn < len(turns) {
		rep.Turn = turns[rec.Turn]
	} else {
		rep.Text = "(end of script)"
	}
	rep.Calls = slices.Clone(rep.Calls)
	for i, c := range rep.Calls {
		if c.ArgsFrom != nil {
			rep.Calls[i].Args = c.ArgsFrom(in.items)
		}
		rep.ids = append(rep.ids, fmt.Sprintf("%s%d_%d_%d", p.prefix, conv, rec.Turn, i))
	}
	failing := rep.Fail != nil && s.failNow(conv, rec.Turn, rep.Fail)
	if !failing {
		rec.CallIDs = rep.ids
	}
	s.record(rec)
	time.Sleep(rep.Delay)
	if failing {
		msg := cmpOr(rep.Fail.Message, "modelserver: scripted failure")
		if rep.Fail.Status != 0 {
			p.fail(w, rep.Fail.Status, msg)
			return
		}
		rep.failMid = msg
	}
	p.write(w, in, rep)
}

// failNow counts a scripted failure of turn in conv: true while it has
// failed fewer than Times times.
func (s *Server) failNow(conv, turn int, f *Failure) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]int{conv, turn}
	if s.failed[k] >= max(f.Times, 1) {
		return false
	}
	s.failed[k]++
	return true
}

// conversation is the index of the scripted conversation a request belongs
// to, or -1 for a side request (one that offers no tools: a title, a
// router's question) or one no Match names.
func (s *Server) conversation(in parsed) int {
	if in.tools == 0 || in.count {
		return -1
	}
	for _, it := range in.items {
		if it.Role != "user" {
			continue
		}
		for i, c := range s.script {
			if c.Match != "" && strings.Contains(it.Text, c.Match) {
				return i
			}
		}
	}
	return -1
}

// turnOf is the turn a request of conv asks for: the one after the
// latest of the server's own replies its history holds, known by their
// call ids (which name the conversation and turn) or their exact text.
// The history's shape does not count: the CLIs merge, reorder and drop
// model messages (Claude Code folds a text reply into the message that
// made an earlier call).
func (s *Server) turnOf(conv int, prefix string, items []Item) int {
	turns := s.script[conv].Turns
	next := 0
	for _, it := range items {
		if it.Role != "model" {
			continue
		}
		if i := strings.LastIndex(it.CallID, prefix); it.CallID != "" && i >= 0 {
			var c, k, n int
			if _, err := fmt.Sscanf(it.CallID[i+len(prefix):], "%d_%d_%d", &c, &k, &n); err == nil && c == conv {
				next = max(next, k+1)
			}
			continue
		}
		text := strings.TrimSpace(it.Text)
		for k, t := range turns {
			if text != "" && text == strings.TrimSpace(t.Text) {
				next = max(next, k+1)
			}
		}
	}
	return next
}

// sideText answers a request outside the script: JSON for a request that
// wants an object (Gemini's router wants a complexity score, its
// next-speaker check a speaker), a short title otherwise.
func sideText(in parsed) string {
	if in.json {
		b, _ := json.Marshal(map[string]any{
			"reasoning": "scripted", "complexity_reasoning": "scripted", "complexity_score": 1,
			"model_choice": "flash", "next_speaker": "user",
		})
		return string(b)
	}
	return "Scripted title"
}

// other answers what no protocol claims: model lists empty, the rest 404.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	}
	http.NotFound(w, r)
}

func route(r *http.Request) (protocol, bool) {
	if r.Method != http.MethodPost {
		return protocol{}, false
	}
	path := r.URL.Path
	for _, p := range protocols {
		if p.match(path) {
			return p.protocol, true
		}
	}
	return protocol{}, false
}

var protocols = []struct {
	match func(path string) bool
	protocol
}{
	{func(p string) bool { return strings.HasSuffix(p, "/messages/count_tokens") }, countTokens},
	{func(p string) bool { return strings.HasSuffix(p, "/v1/messages") }, anthropic},
	{func(p string) bool { return strings.HasSuffix(p, "/responses") }, responses},
	{func(p string) bool { return strings.HasSuffix(p, "/chat/completions") }, chat},
	{func(p string) bool { return strings.Contains(p, "/models/") && strings.Contains(p, ":") }, gemini},
}

// sse writes server-sent events, flushing each.
type sse struct{ w http.ResponseWriter }

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event writes one event; name "" writes a data-only event.
func (s sse) event(name string, data any) {
	b, err := marshal(data)
	if err != nil {
		panic(err) // the server's own maps always marshal
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, err := marshal(v)
	if err != nil {
		panic(err) // the server's own maps always marshal
	}
	w.Write(b)
}

// marshal is JSON as the model APIs write it: no HTML escapes, so a
// command's > reaches the CLI (and its files) as >.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// argsJSON is a call's arguments as a JSON object text.
func argsJSON(c Call) string {
	if c.Args == nil {
		return "{}"
	}
	b, err := marshal(c.Args)
	if err != nil {
		panic(fmt.Sprintf("modelserver: a scripted call's args do not marshal: %v", err))
	}
	return string(b)
}

// contentText flattens a content field that is a string or a list of
// parts with text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		if len(p.Content) > 0 {
			b.WriteString(contentText(p.Content))
		}
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
