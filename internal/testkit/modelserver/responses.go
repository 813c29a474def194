package modelserver

import (
	"encoding/json"
	"net/http"
)

// OpenAI Responses: POST /v1/responses, streamed (SSE).
var responses = protocol{name: "responses", prefix: "call_", parse: responsesParse, write: responsesWrite, fail: openaiFail}

func responsesParse(_ *http.Request, body []byte) (parsed, error) {
	var req struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
		Input  json.RawMessage   `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, err
	}
	p := parsed{model: req.Model, stream: req.Stream, tools: len(req.Tools)}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
	}
	if json.Unmarshal(req.Input, &items) != nil {
		p.items = []Item{{Role: "user", Text: contentText(req.Input)}}
		return p, nil
	}
	for _, it := range items {
		switch {
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			p.items = append(p.items, Item{Role: "model", CallID: it.CallID, Name: it.Name, Text: it.Arguments})
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			p.items = append(p.items, Item{Role: "tool", CallID: it.CallID, Text: contentText(it.Output)})
		case it.Type == "reasoning" || it.Role == "assistant":
			p.items = append(p.items, Item{Role: "model", Text: contentText(it.Content)})
		case it.Role == "user":
			p.items = append(p.items, Item{Role: "user", Text: contentText(it.Content)})
		}
	}
	return p, nil
}

// responsesItems are the reply's output items, complete.
func responsesItems(rep reply) []map[string]any {
	var out []map[string]any
	if rep.Text != "" {
		out = append(out, map[string]any{"type": "message", "id": "msg_modelserver", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for i, c := range rep.Calls {
		fc := map[string]any{"type": "function_call", "id": "fc_" + rep.ids[i], "status": "completed",
			"call_id": rep.ids[i], "name": c.Name, "arguments": argsJSON(c)}
		if c.Namespace != "" {
			fc["namespace"] = c.Namespace
		}
		out = append(out, fc)
	}
	return out
}

func responsesWrite(w http.ResponseWriter, p parsed, rep reply) {
	u := rep.Usage
	resp := map[string]any{"id": "resp_modelserver", "object": "response", "created_at": 0, "model": p.model,
		"status": "in_progress", "output": []any{}}
	s := startSSE(w)
	seq := 0
	ev := func(name string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = name, seq
		seq++
		s.event(name, fields)
	}
	ev("response.created", map[string]any{"response": resp})
	if rep.failMid != "" {
		failed := clone(resp)
		failed["status"], failed["error"] = "failed", map[string]any{"code": "server_error", "message": rep.failMid}
		ev("response.failed", map[string]any{"response": failed})
		return
	}
	items := responsesItems(rep)
	for i, it := range items {
		ev("response.output_item.added", map[string]any{"output_index": i, "item": it})
		if it["type"] == "message" {
			ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "delta": rep.Text})
			ev("response.output_text.done", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "text": rep.Text})
		} else {
			ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": it["id"], "delta": it["arguments"]})
			ev("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": it["id"], "arguments": it["arguments"]})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	done := clone(resp)
	done["status"], done["output"] = "completed", items
	done["usage"] = map[string]any{
		"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": u.Input + u.Output,
	}
	ev("response.completed", map[string]any{"response": done})
}

// openaiFail is an OpenAI error body (Responses and chat completions).
func openaiFail(w http.ResponseWriter, status int, msg string) {
	kind := map[int]string{http.StatusTooManyRequests: "rate_limit_exceeded", http.StatusBadRequest: "invalid_request_error"}[status]
	w.Header().Set("Retry-After", "0")
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": cmpOr(kind, "server_error"), "code": cmpOr(kind, "server_error"), "message": msg}})
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
