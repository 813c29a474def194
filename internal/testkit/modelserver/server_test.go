package modelserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// wire is how a test speaks one protocol: a request at history step (0:
// the prompt only; 1: the prompt, the model's call and its result), and
// how to read the reply's text, call ids and usage out of the response.
type wire struct {
	path    string
	request func(step int, callID string) string
	read    func(t *testing.T, events []map[string]any) (text string, ids []string, u Usage)
}

const prompt = "do it [vigil:main]"

var wires = map[string]wire{
	"anthropic": {
		path: "/v1/messages",
		request: func(step int, id string) string {
			msgs := `{"role":"user","content":"` + prompt + `"}`
			if step == 1 {
				msgs += `,{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{}}]}` +
					`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":[{"type":"text","text":"hi"}]}]}`
			}
			return `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[` + msgs + `]}`
		},
		read: func(t *testing.T, evs []map[string]any) (text string, ids []string, u Usage) {
			for _, e := range evs {
				switch e["type"] {
				case "message_start":
					u = usageOf(e["message"].(map[string]any)["usage"], "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
				case "content_block_start":
					if b := e["content_block"].(map[string]any); b["type"] == "tool_use" {
						ids = append(ids, b["id"].(string))
					}
				case "content_block_delta":
					if d := e["delta"].(map[string]any); d["type"] == "text_delta" {
						text += d["text"].(string)
					}
				case "message_delta":
					if got := usageOf(e["usage"], "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"); got != u {
						t.Errorf("message_delta's usage %+v, message_start's %+v", got, u)
					}
				}
			}
			return
		},
	},
	"responses": {
		path: "/v1/responses",
		request: func(step int, id string) string {
			in := `{"type":"message","role":"user","content":[{"type":"input_text","text":"` + prompt + `"}]}`
			if step == 1 {
				in += `,{"type":"function_call","call_id":"` + id + `","name":"exec_command","arguments":"{}"}` +
					`,{"type":"function_call_output","call_id":"` + id + `","output":"hi"}`
			}
			return `{"model":"m","stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[` + in + `]}`
		},
		read: func(t *testing.T, evs []map[string]any) (text string, ids []string, u Usage) {
			for _, e := range evs {
				switch e["type"] {
				case "response.output_item.done":
					it := e["item"].(map[string]any)
					if it["type"] == "function_call" {
						ids = append(ids, it["call_id"].(string))
					}
				case "response.output_text.delta":
					text += e["delta"].(string)
				case "response.completed":
					r := e["response"].(map[string]any)["usage"].(map[string]any)
					u = usageOf(r, "input_tokens", "output_tokens", "", "")
					u.CacheRead = int(r["input_tokens_details"].(map[string]any)["cached_tokens"].(float64))
				}
			}
			return
		},
	},
	"chat": {
		path: "/v1/chat/completions",
		request: func(step int, id string) string {
			msgs := `{"role":"system","content":"sys"},{"role":"user","content":"` + prompt + `"}`
			if step == 1 {
				msgs += `,{"role":"assistant","content":null,"tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"bash","arguments":"{}"}}]}` +
					`,{"role":"tool","tool_call_id":"` + id + `","content":"hi"}`
			}
			return `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"bash"}}],"messages":[` + msgs + `]}`
		},
		read: func(t *testing.T, evs []map[string]any) (text string, ids []string, u Usage) {
			for _, e := range evs {
				for _, c := range e["choices"].([]any) {
					d := c.(map[string]any)["delta"].(map[string]any)
					if s, ok := d["content"].(string); ok {
						text += s
					}
					for _, tc := range asList(d["tool_calls"]) {
						ids = append(ids, tc.(map[string]any)["id"].(string))
					}
				}
				if us, ok := e["usage"].(map[string]any); ok {
					u = usageOf(us, "prompt_tokens", "completion_tokens", "", "")
					u.CacheRead = int(us["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64))
				}
			}
			return
		},
	},
	"gemini": {
		path: "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
		request: func(step int, id string) string {
			c := `{"role":"user","parts":[{"text":"` + prompt + `"}]}`
			if step == 1 {
				c += `,{"role":"model","parts":[{"functionCall":{"id":"` + id + `","name":"run_shell_command","args":{}}}]}` +
					`,{"role":"user","parts":[{"functionResponse":{"id":"` + id + `","name":"run_shell_command","response":{"output":"hi"}}}]}`
			}
			return `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[` + c + `]}`
		},
		read: func(t *testing.T, evs []map[string]any) (text string, ids []string, u Usage) {
			for _, e := range evs {
				cand := e["candidates"].([]any)[0].(map[string]any)
				for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
					p := p.(map[string]any)
					if s, ok := p["text"].(string); ok {
						text += s
					}
					if fc, ok := p["functionCall"].(map[string]any); ok {
						ids = append(ids, fc["id"].(string))
					}
				}
				u = usageOf(e["usageMetadata"], "promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount", "")
			}
			return
		},
	},
}

func usageOf(v any, in, out, read, write string) Usage {
	m, _ := v.(map[string]any)
	n := func(k string) int {
		f, _ := m[k].(float64)
		return int(f)
	}
	return Usage{Input: n(in), Output: n(out), CacheRead: n(read), CacheWrite: n(write)}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// post sends body and returns the status and the SSE events' data.
func post(t *testing.T, srv *Server, path, body string) (int, []map[string]any) {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("%s: an event that is not JSON: %q", path, data)
		}
		evs = append(evs, m)
	}
	return resp.StatusCode, evs
}

func TestEachProtocolServesTheScriptAndRecordsResults(t *testing.T) {
	for name, w := range wires {
		t.Run(name, func(t *testing.T) {
			call := Usage{Input: 1200, Output: 30, CacheRead: 100}
			final := Usage{Input: 1300, Output: 40, CacheRead: 200}
			if name == "anthropic" {
				call.CacheWrite, final.CacheWrite = 50, 60
			}
			srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{
				{Calls: []Call{{Name: "shell", Args: map[string]any{"command": "echo hi > out.txt"}}}, Usage: call},
				{Text: "done", Usage: final},
			}}})
			if u, _ := url.Parse(srv.URL); u.Hostname() != "127.0.0.1" {
				t.Fatalf("listens on %s, not loopback", srv.URL)
			}
			status, evs := post(t, srv, w.path, w.request(0, ""))
			text, ids, u := w.read(t, evs)
			if status != 200 || text != "" || len(ids) != 1 || u != call {
				t.Fatalf("first turn: status %d, text %q, calls %v, usage %+v (want one call, %+v)", status, text, ids, u, call)
			}
			status, evs = post(t, srv, w.path, w.request(1, ids[0]))
			text, ids2, u := w.read(t, evs)
			if status != 200 || text != "done" || len(ids2) != 0 || u != final {
				t.Fatalf("second turn: status %d, text %q, calls %v, usage %+v (want done, %+v)", status, text, ids2, u, final)
			}
			if got, ok := srv.ToolResult(ids[0]); !ok || !strings.Contains(got, "hi") {
				t.Errorf("recorded result for %s: %q, %v", ids[0], got, ok)
			}
			if got := srv.Served(); len(got) != 1 || got[0] != ids[0] {
				t.Errorf("served %v, want %v", got, ids)
			}
		})
	}
}

func TestCallArgumentsKeepShellCharacters(t *testing.T) {
	srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{{Calls: []Call{{Name: "exec_command", Args: map[string]any{"cmd": "a > b && c < d"}}}}}}})
	_, evs := post(t, srv, "/v1/responses", wires["responses"].request(0, ""))
	for _, e := range evs {
		if e["type"] == "response.output_item.done" {
			if got := e["item"].(map[string]any)["arguments"]; got != `{"cmd":"a > b && c < d"}` {
				t.Fatalf("arguments %v", got)
			}
			return
		}
	}
	t.Fatal("no function call")
}

func TestFailuresRetryTheSameTurn(t *testing.T) {
	srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{
		{Text: "after two failures", Fail: &Failure{Status: http.StatusTooManyRequests, Times: 2}},
	}}})
	w := wires["anthropic"]
	for i := range 2 {
		if status, _ := post(t, srv, w.path, w.request(0, "")); status != http.StatusTooManyRequests {
			t.Fatalf("attempt %d: status %d, want 429", i+1, status)
		}
	}
	status, evs := post(t, srv, w.path, w.request(0, ""))
	if text, _, _ := w.read(t, evs); status != 200 || text != "after two failures" {
		t.Fatalf("third attempt: %d %q", status, text)
	}
}

func TestFailureMidStreamIsAnErrorEvent(t *testing.T) {
	for name, w := range wires {
		t.Run(name, func(t *testing.T) {
			srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{{Text: "ok", Fail: &Failure{Message: "scripted"}}}}})
			status, evs := post(t, srv, w.path, w.request(0, ""))
			if status != 200 || len(evs) == 0 || !strings.Contains(mustJSON(t, evs[len(evs)-1]), "scripted") {
				t.Fatalf("status %d, events %v: want a stream ending in the scripted error", status, evs)
			}
			if _, evs := post(t, srv, w.path, w.request(0, "")); !strings.Contains(mustJSON(t, evs), `"ok"`) {
				t.Fatalf("the retry: %v", evs)
			}
		})
	}
}

func TestSlowTurnWaits(t *testing.T) {
	srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{{Text: "late", Delay: 300 * time.Millisecond}}}})
	start := time.Now()
	post(t, srv, "/v1/chat/completions", wires["chat"].request(0, ""))
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("answered after %s, before the scripted delay", took)
	}
}

func TestSideRequestsAndSubAgents(t *testing.T) {
	srv := Start(t, Script{
		{Match: "[vigil:main]", Turns: []Turn{{Text: "parent"}}},
		{Match: "[vigil:sub]", Turns: []Turn{{Text: "child"}}},
	})
	// Gemini's router asks for a JSON object, with no tools.
	resp, err := http.Post(srv.URL+"/v1beta/models/lite:generateContent", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"`+prompt+`"}]}],"generationConfig":{"responseMimeType":"application/json"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	json.NewDecoder(resp.Body).Decode(&g)
	resp.Body.Close()
	var route map[string]any
	if len(g.Candidates) != 1 || json.Unmarshal([]byte(g.Candidates[0].Content.Parts[0].Text), &route) != nil || route["complexity_score"] == nil {
		t.Fatalf("router answer %+v", g)
	}
	// A child's history starts with its own prompt; a parent's result
	// may quote the child's, and stays the parent's.
	child := strings.Replace(wires["chat"].request(0, ""), "[vigil:main]", "[vigil:sub]", 1)
	if _, evs := post(t, srv, "/v1/chat/completions", child); !strings.Contains(mustJSON(t, evs), `"child"`) {
		t.Fatalf("child got %v", evs)
	}
	parent := strings.Replace(wires["chat"].request(1, "call_0_0_0"), `"content":"hi"`, `"content":"[vigil:sub] said child"`, 1)
	reqs := srv.Requests()
	post(t, srv, "/v1/chat/completions", parent)
	last := srv.Requests()[len(reqs)]
	if last.Conversation != 0 || last.Turn != 1 {
		t.Fatalf("the parent's second request went to conversation %d turn %d", last.Conversation, last.Turn)
	}
	if r := srv.Requests()[0]; r.Conversation != -1 || r.Protocol != "gemini" {
		t.Fatalf("the router's request recorded as %+v", r)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTurnFromTheServersOwnRepliesNotTheHistorysShape(t *testing.T) {
	srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{
		{Calls: []Call{{Name: "Agent"}}}, {Text: "Launched."}, {Text: "All done."},
	}}})
	// Claude Code folds the text reply into the message that made the call.
	folded := `{"model":"m","stream":true,"tools":[{"name":"Agent"}],"messages":[{"role":"user","content":"` + prompt + `"},` +
		`{"role":"assistant","content":[{"type":"text","text":"Launched."},{"type":"tool_use","id":"toolu_0_0_0","name":"Agent","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0_0_0","content":"launched"},{"type":"text","text":"notification"}]}]}`
	_, evs := post(t, srv, "/v1/messages", folded)
	if text, _, _ := wires["anthropic"].read(t, evs); text != "All done." {
		t.Fatalf("got %q, want the third turn", text)
	}
}

func TestTokenCountsAreSideRequests(t *testing.T) {
	srv := Start(t, Script{{Match: "[vigil:main]", Turns: []Turn{{Text: "first", Fail: &Failure{Status: 500}}}}})
	for _, path := range []string{"/v1/messages/count_tokens", "/v1beta/models/g:countTokens"} {
		body := wires["anthropic"].request(0, "")
		if strings.Contains(path, "countTokens") {
			body = wires["gemini"].request(0, "")
		}
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != 200 || (got["input_tokens"] == nil && got["totalTokens"] == nil) {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, got)
		}
	}
	// The scripted failure is still there for the first real call.
	if status, _ := post(t, srv, "/v1/messages", wires["anthropic"].request(0, "")); status != 500 {
		t.Fatalf("the first real call got %d, want the scripted 500", status)
	}
}
