package starweaver

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// Schema ids of the record envelopes vigil reads (docs/formats/starweaver.md,
// "Record envelopes").
const (
	schemaSession    = "starweaver.session.session_record"
	schemaRun        = "starweaver.session.run_record"
	schemaStream     = "starweaver.runtime.stream_record"
	schemaCheckpoint = "starweaver.runtime.checkpoint"
	schemaApproval   = "starweaver.session.approval_record"
	schemaDeferred   = "starweaver.session.deferred_tool_record"
	schemaClaim      = "starweaver.session.hitl_resume_claim"
	schemaReplay     = "starweaver.stream.replay_event"
)

// maxEnvelopeVersion is the newest envelope version vigil reads: 0.7.0
// writes 1 everywhere, 0.15.0 writes 2 for session and run records.
const maxEnvelopeVersion = 2

// unwrap returns the payload of a record column: the envelope
// {"schema","version","payload"} of the wanted schema and a version 0–2, or
// (bareOK) a legacy bare value with neither schema nor version key, which
// is the payload itself. Anything else — another schema, a newer version,
// not JSON — is not this record, and ok is false: the row is skipped.
func unwrap(raw []byte, schema string, bareOK bool) (payload []byte, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var env struct {
		Schema  *string         `json:"schema"`
		Version *json.Number    `json:"version"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, false
	}
	if env.Schema == nil && env.Version == nil {
		if !bareOK {
			return nil, false
		}
		return raw, true
	}
	if env.Schema == nil || *env.Schema != schema || env.Version == nil {
		return nil, false
	}
	v, err := env.Version.Int64()
	if err != nil || v < 0 || v > maxEnvelopeVersion {
		return nil, false
	}
	p := bytes.TrimSpace(env.Payload)
	if len(p) == 0 || p[0] != '{' {
		return nil, false
	}
	return p, true
}

// decode unwraps a record and decodes its payload into v.
func decode(raw []byte, schema string, bareOK bool, v any) bool {
	p, ok := unwrap(raw, schema, bareOK)
	if !ok {
		return false
	}
	return json.Unmarshal(p, v) == nil
}

// sessionRec is the part of a SessionRecord vigil shows.
type sessionRec struct {
	SessionID     string          `json:"session_id"`
	Title         string          `json:"title"`
	Workspace     json.RawMessage `json:"workspace"` // a string (v1) or {workspace_id, display_label?, …} (v2)
	Profile       string          `json:"profile"`
	Status        string          `json:"status"`
	DeletionFence *struct {
		State string `json:"state"`
	} `json:"deletion_fence"`
}

// workspace is the session's workspace as text: the v1 string, or the v2
// object's display label (else its id).
func (s *sessionRec) workspace() string {
	if len(s.Workspace) == 0 {
		return ""
	}
	var str string
	if json.Unmarshal(s.Workspace, &str) == nil {
		return str
	}
	var obj struct {
		ID    string `json:"workspace_id"`
		Label string `json:"display_label"`
	}
	if json.Unmarshal(s.Workspace, &obj) == nil {
		if obj.Label != "" {
			return obj.Label
		}
		return obj.ID
	}
	return ""
}

// deleted reports a session 0.15 has deleted or is deleting: its runs are
// no longer the user's.
func (s *sessionRec) deleted() bool {
	return s.Status == "deleted" || (s.DeletionFence != nil && s.DeletionFence.State == "deleted")
}

// runRec is the part of a RunRecord vigil maps to a run.
type runRec struct {
	SessionID      string `json:"session_id"`
	RunID          string `json:"run_id"`
	ConversationID string `json:"conversation_id"`
	Input          []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"input"`
	Status        string `json:"status"`
	OutputPreview string `json:"output_preview"`
	TerminalError *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"terminal_error"`
	SequenceNo       int64  `json:"sequence_no"`
	RestoreFromRunID string `json:"restore_from_run_id"`
	ParentRunID      string `json:"parent_run_id"`
	ParentTaskID     string `json:"parent_task_id"`
	TriggerType      string `json:"trigger_type"`
	Profile          string `json:"profile"`
	CreatedAt        string `json:"created_at"`
	UpdatedAt        string `json:"updated_at"`
}

// prompt is the run's text input, parts joined by blank lines.
func (r *runRec) prompt() string {
	var parts []string
	for _, p := range r.Input {
		if p.Text != "" && (p.Kind == "text" || p.Kind == "") {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// terminal reports a run status that can no longer change.
func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// streamRec is an AgentStreamRecord.
type streamRec struct {
	Sequence int64           `json:"sequence"`
	Source   json.RawMessage `json:"source"`
	Event    streamEvent     `json:"event"`
}

// source is who a merged record came from: the subagent run it was copied
// out of ("" when the record is the run's own).
func (r *streamRec) source() (merged bool, runID string) {
	s := bytes.TrimSpace(r.Source)
	if len(s) == 0 || s[0] != '{' {
		return false, ""
	}
	var src struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(s, &src)
	return true, src.RunID
}

// streamEvent is the event of a stream record; which fields are set depends
// on its kind (docs/formats/starweaver.md, "Timeline").
type streamEvent struct {
	Kind       string          `json:"kind"`
	Step       int             `json:"step"`
	Node       string          `json:"node"`
	RunID      string          `json:"run_id"`
	Response   *modelResponse  `json:"response"`
	Call       *toolCall       `json:"call"`
	ToolReturn *toolReturn     `json:"tool_return"`
	Reason     json.RawMessage `json:"reason"`
	ErrorKind  string          `json:"error_kind"`
	Message    string          `json:"message"`
	Output     json.RawMessage `json:"output"`
}

type modelResponse struct {
	Parts    []responsePart `json:"parts"`
	Usage    *usage         `json:"usage"`
	Model    string         `json:"model_name"`
	Provider *struct {
		Name string `json:"name"`
	} `json:"provider"`
	FinishReason string `json:"finish_reason"`
	Timestamp    string `json:"timestamp"`
}

// responsePart is one part of a ModelResponse, flattened next to its kind.
type responsePart struct {
	Kind      string          `json:"kind"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Call      *toolCall       `json:"call"` // provider_tool_call
	Summary   string          `json:"summary"`
}

// calls are the tool calls the response makes.
func (m *modelResponse) calls() []toolCall {
	var out []toolCall
	for _, p := range m.Parts {
		switch {
		case p.Kind == "tool_call":
			out = append(out, toolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments})
		case p.Kind == "provider_tool_call" && p.Call != nil:
			out = append(out, *p.Call)
		}
	}
	return out
}

// text is what the model wrote, thinking marked apart.
func (m *modelResponse) text() (string, bool) {
	var parts []string
	has := false
	for _, p := range m.Parts {
		switch p.Kind {
		case "text", "provider_text":
			has = true
			parts = append(parts, p.Text)
		case "thinking", "provider_thinking":
			has = true
			parts = append(parts, "[thinking] "+p.Text)
		case "compaction":
			has = true
			parts = append(parts, "[compaction] "+p.Summary)
		}
	}
	return strings.Join(parts, "\n\n"), has
}

// Usage is always written with a ModelResponse; cache counts default to 0.
type usage struct {
	Requests         int64  `json:"requests"`
	InputTokens      *int64 `json:"input_tokens"` // includes the two cache counts
	CacheWriteTokens *int64 `json:"cache_write_tokens"`
	CacheReadTokens  *int64 `json:"cache_read_tokens"`
	OutputTokens     *int64 `json:"output_tokens"`
	TotalTokens      *int64 `json:"total_tokens"`
}

type toolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type toolReturn struct {
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Content    json.RawMessage `json:"content"`
	IsError    bool            `json:"is_error"`
	Metadata   struct {
		ControlFlow string `json:"control_flow"`
	} `json:"metadata"`
}

// approvalRec is an ApprovalRecord.
type approvalRec struct {
	ApprovalID string          `json:"approval_id"`
	SessionID  string          `json:"session_id"`
	RunID      string          `json:"run_id"`
	ActionID   string          `json:"action_id"`
	ActionName string          `json:"action_name"`
	Request    json.RawMessage `json:"request"`
	Status     string          `json:"status"`
	Decision   *struct {
		Status    string `json:"status"`
		DecidedBy string `json:"decided_by"`
		DecidedAt string `json:"decided_at"`
		Reason    string `json:"reason"`
	} `json:"decision"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// deferredRec is a DeferredToolRecord.
type deferredRec struct {
	DeferredID string          `json:"deferred_id"`
	SessionID  string          `json:"session_id"`
	RunID      string          `json:"run_id"`
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
	Request    json.RawMessage `json:"request"`
	Status     string          `json:"status"`
	Response   json.RawMessage `json:"response"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at"`
}

// deferredOpen reports an ExecutionStatus that still waits on a result.
func deferredOpen(status string) bool {
	return status == "pending" || status == "running" || status == "waiting"
}

// claimRec is a HitlResumeClaim.
type claimRec struct {
	ClaimID   string `json:"claim_id"`
	RunID     string `json:"run_id"`
	State     string `json:"state"`
	CreatedAt string `json:"created_at"`
}

// checkpointRec is the part of an AgentCheckpoint vigil shows.
type checkpointRec struct {
	CheckpointID string `json:"checkpoint_id"`
	Node         string `json:"node"`
	RunStep      int    `json:"run_step"`
}

// displayEvent is a ReplayEvent carrying a DisplayMessage (the message's
// fields sit beside "kind":"display_message").
type displayEvent struct {
	Event struct {
		Kind      string          `json:"kind"`
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
		Preview   string          `json:"preview"`
		Timestamp string          `json:"timestamp"`
		Metadata  struct {
			Policy *struct {
				HITL string `json:"hitl"`
			} `json:"cli_run_policy"`
		} `json:"metadata"`
	} `json:"event"`
}

// parseTS reads both timestamp forms (docs/formats/starweaver.md,
// "Timestamps"): "…Z" inside JSON and "…+00:00" in relational columns, with
// 0–9 fraction digits. Anything else is zero.
func parseTS(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// formatTS writes a time the way chrono's AutoSi does: the shortest of 0,
// 3, 6 or 9 fraction digits that is exact, then suffix ("Z" for JSON,
// "+00:00" for columns).
func formatTS(t time.Time, suffix string) string {
	t = t.UTC()
	base := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return base + suffix
	case ns%1_000_000 == 0:
		return base + "." + pad(ns/1_000_000, 3) + suffix
	case ns%1_000 == 0:
		return base + "." + pad(ns/1_000, 6) + suffix
	}
	return base + "." + pad(ns, 9) + suffix
}

func pad(n, w int) string {
	s := []byte(strings.Repeat("0", w))
	for i := w - 1; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// compactJSON is a JSON value on one line ("" for none or null).
func compactJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// prettyJSON is a JSON value indented for reading; a JSON string is shown
// as its text.
func prettyJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
