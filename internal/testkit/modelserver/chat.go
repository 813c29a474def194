package modelserver

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// OpenAI-compatible chat completions: POST /v1/chat/completions, streamed
// (SSE, ending with [DONE]) or not.
var chat = protocol{name: "chat", prefix: "call_", parse: chatParse, write: chatWrite, fail: openaiFail}

func chatParse(_ *http.Request, body []byte) (parsed, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, err
	}
	p := parsed{model: req.Model, stream: req.Stream, tools: len(req.Tools)}
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			p.items = append(p.items, Item{Role: "model", Text: contentText(m.Content)})
			for _, c := range m.ToolCalls {
				p.items = append(p.items, Item{Role: "model", CallID: c.ID, Name: c.Function.Name, Text: c.Function.Arguments})
			}
		case "tool":
			p.items = append(p.items, Item{Role: "tool", CallID: m.ToolCallID, Text: contentText(m.Content)})
		case "user":
			p.items = append(p.items, Item{Role: "user", Text: contentText(m.Content)})
		}
	}
	return p, nil
}

func chatUsage(u Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheRead}}
}

func chatWrite(w http.ResponseWriter, p parsed, rep reply) {
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	var calls []any
	for i, c := range rep.Calls {
		calls = append(calls, map[string]any{"index": i, "id": rep.ids[i], "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	base := map[string]any{"id": "chatcmpl-modelserver", "created": 0, "model": p.model}
	if !p.stream {
		full := clone(base)
		full["object"], full["usage"] = "chat.completion", chatUsage(rep.Usage)
		full["choices"] = []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}
		writeJSON(w, http.StatusOK, full)
		return
	}
	s := startSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := clone(base)
		c["object"] = "chat.completion.chunk"
		c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		if usage != nil {
			c["usage"] = usage
		}
		s.event("", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if rep.failMid != "" {
		s.event("", map[string]any{"error": map[string]any{"type": "server_error", "message": rep.failMid}})
		return
	}
	if rep.Text != "" {
		chunk(map[string]any{"content": rep.Text}, nil, nil)
	}
	if calls != nil {
		chunk(map[string]any{"tool_calls": calls}, nil, nil)
	}
	chunk(map[string]any{}, finish, chatUsage(rep.Usage))
	fmt.Fprint(w, "data: [DONE]\n\n")
}
