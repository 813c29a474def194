package modelserver

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Gemini: POST /v1beta/models/{model}:streamGenerateContent?alt=sse,
// :generateContent and :countTokens.
var gemini = protocol{name: "gemini", prefix: "call_", parse: geminiParse, write: geminiWrite, fail: geminiFail}

func geminiParse(r *http.Request, body []byte) (parsed, error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, err
	}
	model, method, _ := strings.Cut(r.URL.Path[strings.LastIndex(r.URL.Path, "/models/")+len("/models/"):], ":")
	p := parsed{model: model, stream: method == "streamGenerateContent", json: req.GenerationConfig.ResponseMimeType == "application/json"}
	if method == "countTokens" {
		p.stream, p.count = false, true
	}
	for _, t := range req.Tools {
		p.tools += len(t.FunctionDeclarations)
	}
	for _, c := range req.Contents {
		role := "user"
		if c.Role == "model" {
			role = "model"
		}
		for _, part := range c.Parts {
			switch {
			case part.FunctionCall != nil:
				p.items = append(p.items, Item{Role: "model", CallID: part.FunctionCall.ID, Name: part.FunctionCall.Name, Text: string(part.FunctionCall.Args)})
			case part.FunctionResponse != nil:
				p.items = append(p.items, Item{Role: "tool", CallID: part.FunctionResponse.ID, Name: part.FunctionResponse.Name, Text: string(part.FunctionResponse.Response)})
			default:
				p.items = append(p.items, Item{Role: role, Text: part.Text})
			}
		}
	}
	return p, nil
}

func geminiWrite(w http.ResponseWriter, p parsed, rep reply) {
	if p.count {
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 0})
		return
	}
	var parts []any
	if rep.Text != "" {
		parts = append(parts, map[string]any{"text": rep.Text})
	}
	for i, c := range rep.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": rep.ids[i], "name": c.Name, "args": json.RawMessage(argsJSON(c))}})
	}
	u := rep.Usage
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": parts}}},
		"usageMetadata": map[string]any{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"cachedContentTokenCount": u.CacheRead, "totalTokenCount": u.Input + u.Output},
		"modelVersion": p.model, "responseId": "modelserver",
	}
	if !p.stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	s := startSSE(w)
	if rep.failMid != "" {
		s.event("", map[string]any{"error": map[string]any{"code": 500, "status": "INTERNAL", "message": rep.failMid}})
		return
	}
	s.event("", resp)
}

func geminiFail(w http.ResponseWriter, status int, msg string) {
	kind := map[int]string{http.StatusTooManyRequests: "RESOURCE_EXHAUSTED", http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusServiceUnavailable: "UNAVAILABLE"}[status]
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "status": cmpOr(kind, "INTERNAL"), "message": msg}})
}
