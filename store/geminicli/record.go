package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// line is one JSON line of a chat file: the header, a message, a $set
// patch or a $rewindTo. Fields the adapter does not show are not decoded.
type line struct {
	// Header (the first line) and the header fields a $set may patch.
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	StartTime   string `json:"startTime"`
	LastUpdated string `json:"lastUpdated"`
	Kind        string `json:"kind"`
	Summary     string `json:"summary"`

	// A message.
	message

	Set      *patch  `json:"$set"`
	RewindTo *string `json:"$rewindTo"`
}

// patch is a $set: header fields, and a whole messages list when the CLI
// checkpoints the conversation.
type patch struct {
	LastUpdated string     `json:"lastUpdated"`
	Summary     string     `json:"summary"`
	Messages    *[]message `json:"messages"`
}

// message is a MessageRecord of chatRecordingTypes.ts.
type message struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Tokens    *tokens         `json:"tokens"`
	Model     string          `json:"model"`
	ToolCalls []toolCall      `json:"toolCalls"`

	// said is whether the content has text, kept when a light fold drops it.
	said bool
}

// tokens is a TokensSummary: what the provider reported for the turn.
type tokens struct {
	Input    int64  `json:"input"`
	Output   int64  `json:"output"`
	Cached   int64  `json:"cached"`
	Thoughts *int64 `json:"thoughts"`
	Tool     *int64 `json:"tool"`
	Total    int64  `json:"total"`
}

// toolCall is a ToolCallRecord.
type toolCall struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"`
	Result  json.RawMessage `json:"result"`
	Status  string          `json:"status"`
	AgentID string          `json:"agentId"`
}

// wireID is the call's id as the model saw it: the chat file keeps it
// prefixed with the tool's name and two underscores.
func (c toolCall) wireID() string {
	return strings.TrimPrefix(c.ID, c.Name+"__")
}

// done reports a call whose result is in (the scheduler's terminal states).
func (c toolCall) done() bool {
	switch c.Status {
	case "success", "error", "cancelled":
		return true
	}
	return false
}

// resultText is the call's result as text: each functionResponse's
// output (or its whole response when it has none), and any text parts.
func (c toolCall) resultText() string {
	return partsText(c.Result, true)
}

// isMessage reports a message line (MessageRecord has an id and a type).
func (l *line) isMessage() bool { return l.ID != "" && l.Type != "" && l.Set == nil }

// parseLine decodes one line; an error is a malformed line.
func parseLine(b []byte) (*line, error) {
	b = bytes.TrimSpace(b)
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	if l.Set == nil && l.RewindTo == nil && l.ID == "" && l.SessionID == "" {
		return nil, fmt.Errorf("neither a message, a header nor a patch")
	}
	return &l, nil
}

type part struct {
	Text             *string `json:"text"`
	FunctionResponse *struct {
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// partsText is a PartListUnion as text: a string, a part or a list of
// parts; function responses are included when responses is true.
func partsText(raw json.RawMessage, responses bool) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []part
	if json.Unmarshal(raw, &parts) != nil {
		var one part
		if json.Unmarshal(raw, &one) != nil {
			return ""
		}
		parts = []part{one}
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != nil:
			out = append(out, *p.Text)
		case responses && p.FunctionResponse != nil:
			var r struct {
				Output *string `json:"output"`
			}
			if json.Unmarshal(p.FunctionResponse.Response, &r) == nil && r.Output != nil {
				out = append(out, *r.Output)
			} else {
				out = append(out, string(p.FunctionResponse.Response))
			}
		}
	}
	return strings.Join(out, "\n")
}
