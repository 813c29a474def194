package opencode

import (
	"encoding/json"
	"time"
)

// message is the data column of a message row (MessageV2.Info in
// packages/opencode/src/session/message-v2.ts): a user prompt or an
// assistant reply, one reply per model call.
type message struct {
	Role       string `json:"role"`
	ModelID    string `json:"modelID"`
	ProviderID string `json:"providerID"`
	Finish     string `json:"finish"`
	Time       struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// part is the data column of a part row (MessageV2.Part): text, reasoning,
// a tool call with its state, a step's start and finish.
type part struct {
	Type   string  `json:"type"`
	Text   string  `json:"text"`
	Tool   string  `json:"tool"`
	CallID string  `json:"callID"`
	Reason string  `json:"reason"`
	Tokens *tokens `json:"tokens"`
	State  struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
		Title  string          `json:"title"`
	} `json:"state"`
}

// tokens is a step-finish part's usage as opencode stores it: getUsage
// (packages/opencode/src/session/index.ts) subtracts the cache reads and
// writes from the input the provider reported, and the reasoning from its
// output, so the provider's own figures are the sums put back together.
type tokens struct {
	Total     *int64 `json:"total"`
	Input     int64  `json:"input"`
	Output    int64  `json:"output"`
	Reasoning int64  `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

// prompt is the input tokens the provider reported.
func (t *tokens) prompt() int64 { return t.Input + t.Cache.Read + t.Cache.Write }

// completion is the output tokens the provider reported.
func (t *tokens) completion() int64 { return t.Output + t.Reasoning }

// total is the provider's total, or prompt + completion when opencode kept
// none (a provider that reports no totalTokens).
func (t *tokens) total() int64 {
	if t.Total != nil {
		return *t.Total
	}
	return t.prompt() + t.completion()
}

// input is the call's arguments as text: the JSON object as stored, or
// its head, which a timeline read (headCols) hands over as a string.
func (p *part) input() string {
	if len(p.State.Input) > 0 && p.State.Input[0] == '"' {
		var s string
		if json.Unmarshal(p.State.Input, &s) == nil {
			return s
		}
	}
	return string(p.State.Input)
}

func decodeMessage(b []byte) (message, error) {
	var m message
	err := json.Unmarshal(b, &m)
	return m, err
}

func decodePart(b []byte) (part, error) {
	var p part
	err := json.Unmarshal(b, &p)
	return p, err
}

// millis is opencode's Unix-millisecond time (zero stays zero).
func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// firstLine is s's first non-empty line, cut to n bytes.
