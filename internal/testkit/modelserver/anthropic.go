package modelserver

import (
	"encoding/json"
	"net/http"
)

// Anthropic Messages: POST /v1/messages, streamed (SSE) or not, and
// /v1/messages/count_tokens.
var anthropic = protocol{name: "anthropic", prefix: "toolu_", parse: anthropicParse, write: anthropicWrite, fail: anthropicFail}

var countTokens = protocol{
	name: "anthropic",
	parse: func(r *http.Request, body []byte) (parsed, error) {
		p, err := anthropicParse(r, body)
		p.count = true
		return p, err
	},
	write: func(w http.ResponseWriter, p parsed, _ reply) {
		n := 0
		for _, it := range p.items {
			n += len(it.Text) / 4
		}
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
	},
	fail: anthropicFail,
}

func anthropicParse(_ *http.Request, body []byte) (parsed, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, err
	}
	p := parsed{model: req.Model, stream: req.Stream, tools: len(req.Tools)}
	for _, m := range req.Messages {
		role := map[string]string{"assistant": "model"}[m.Role]
		if role == "" {
			role = "user"
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			p.items = append(p.items, Item{Role: role, Text: contentText(m.Content)})
			continue
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				p.items = append(p.items, Item{Role: "model", CallID: b.ID, Name: b.Name, Text: string(b.Input)})
			case "tool_result":
				p.items = append(p.items, Item{Role: "tool", CallID: b.ToolUseID, Text: contentText(b.Content)})
			case "text":
				p.items = append(p.items, Item{Role: role, Text: b.Text})
			default: // thinking and the like are the model's
				if role == "model" {
					p.items = append(p.items, Item{Role: role})
				}
			}
		}
	}
	return p, nil
}

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens": u.Input, "output_tokens": u.Output,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite,
	}
}

// anthropicBlocks are the reply's content blocks, complete.
func anthropicBlocks(rep reply) []map[string]any {
	var out []map[string]any
	if rep.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, c := range rep.Calls {
		out = append(out, map[string]any{"type": "tool_use", "id": rep.ids[i], "name": c.Name, "input": json.RawMessage(argsJSON(c))})
	}
	return out
}

func anthropicStop(rep reply) string {
	if len(rep.Calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func anthropicWrite(w http.ResponseWriter, p parsed, rep reply) {
	msg := map[string]any{
		"id": "msg_modelserver", "type": "message", "role": "assistant", "model": p.model,
		"content": anthropicBlocks(rep), "stop_reason": anthropicStop(rep), "stop_sequence": nil,
		"usage": anthropicUsage(rep.Usage),
	}
	if !p.stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	s := startSSE(w)
	start := clone(msg)
	start["content"], start["stop_reason"] = []any{}, nil
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	if rep.failMid != "" {
		s.event("error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": rep.failMid}})
		return
	}
	for i, b := range anthropicBlocks(rep) {
		switch b["type"] {
		case "text":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(rep), "stop_sequence": nil}, "usage": anthropicUsage(rep.Usage)})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

func anthropicFail(w http.ResponseWriter, status int, msg string) {
	kind := map[int]string{http.StatusTooManyRequests: "rate_limit_error", 529: "overloaded_error", http.StatusBadRequest: "invalid_request_error"}[status]
	w.Header().Set("Retry-After", "0")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": cmpOr(kind, "api_error"), "message": msg}})
}
