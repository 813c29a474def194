package leviath

import (
	"encoding/json"
)

// The types below mirror Leviath's serde shapes (docs/formats/leviath.md:
// "Records and the fold", "Context windows and deltas"; 0.4.0's additions).
// They are decoded with encoding/json, which ignores keys a struct does not
// declare: RunMeta's callback_secret (and callback_url and the free-form
// metadata map) have no field here, so the secret is never decoded into
// anything vigil keeps. Fields HEAD added with uncertain shapes are kept as
// raw JSON and read leniently.

// runIdentity is RunIdentity.
type runIdentity struct {
	RunID     string `json:"run_id"`
	MachineID string `json:"machine_id"`
	WorldID   string `json:"world_id"`
	CreatedAt int64  `json:"created_at"`
}

// runMeta is the part of RunMeta vigil shows. Only these keys are
// decoded, so a field a newer Leviath retypes elsewhere in RunMeta cannot
// make a record unreadable; callback_secret, callback_url and metadata are
// among the keys never decoded.
type runMeta struct {
	Task             string   `json:"task"`
	Model            *string  `json:"model"`
	PID              int64    `json:"pid"`
	Status           string   `json:"status"`
	CurrentStage     string   `json:"current_stage"`
	StageIndex       int64    `json:"stage_index"`
	NumStages        int64    `json:"num_stages"`
	Iteration        int64    `json:"iteration"`
	PromptTokens     int64    `json:"prompt_tokens"`
	CompletionTokens int64    `json:"completion_tokens"`
	Workdir          string   `json:"workdir"`
	StartedAt        int64    `json:"started_at"`
	UpdatedAt        int64    `json:"updated_at"`
	LastProgressAt   *int64   `json:"last_progress_at"` // HEAD
	Error            *string  `json:"error"`
	ParentRunID      *string  `json:"parent_run_id"`
	Children         []string `json:"children"`
	Depth            int      `json:"depth"`
	// HEAD: tagged by "reason"; read leniently (see waitingReason).
	WaitingOn json.RawMessage `json:"waiting_on"`
}

func (m *runMeta) spend() int64 { return m.PromptTokens + m.CompletionTokens }

func (m *runMeta) model() string {
	if m.Model == nil {
		return ""
	}
	return *m.Model
}

func (m *runMeta) parent() string {
	if m.ParentRunID == nil {
		return ""
	}
	return *m.ParentRunID
}

func (m *runMeta) errText() string {
	if m.Error == nil {
		return ""
	}
	return *m.Error
}

// waitingReason reads HEAD's waiting_on ({"reason":"children","outstanding":2}).
func (m *runMeta) waitingReason() (reason string, outstanding int64) {
	if len(m.WaitingOn) == 0 || string(m.WaitingOn) == "null" {
		return "", 0
	}
	var w struct {
		Reason      string `json:"reason"`
		Outstanding int64  `json:"outstanding"`
	}
	if json.Unmarshal(m.WaitingOn, &w) != nil {
		var s string
		if json.Unmarshal(m.WaitingOn, &s) == nil {
			return s, 0
		}
		return "", 0
	}
	return w.Reason, w.Outstanding
}

// contextSnapshot is ContextSnapshot.
type contextSnapshot struct {
	StageName   string           `json:"stage_name"`
	TotalTokens int64            `json:"total_tokens"`
	MaxTokens   int64            `json:"max_tokens"`
	Regions     []regionSnapshot `json:"regions"`
}

// regionSnapshot is RegionSnapshot.
type regionSnapshot struct {
	Name          string          `json:"name"`
	Kind          string          `json:"kind"`
	CurrentTokens int64           `json:"current_tokens"`
	MaxTokens     int64           `json:"max_tokens"`
	Entries       []entrySnapshot `json:"entries"`
}

// entrySnapshot is RegionEntrySnapshot (tokens, metadata and taint are
// not read).
type entrySnapshot struct {
	Content text      `json:"content"`
	Kind    entryKind `json:"kind"`
	Key     *string   `json:"key"`
}

// entryKind is EntryKind, internally tagged by "type".
type entryKind struct {
	Type       string          `json:"type"`
	ToolCalls  []entryToolCall `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
	IsError    bool            `json:"is_error"`
}

// entryToolCall is one call of an AssistantTurn entry: arguments is a JSON
// value (normally an object), kept as written.
type entryToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

const (
	kindText      = "Text"
	kindUser      = "UserMessage"
	kindAssistant = "AssistantTurn"
	kindResult    = "ToolResult"
)

// contextDelta is ContextDelta.
type contextDelta struct {
	StageName   string        `json:"stage_name"`
	TotalTokens int64         `json:"total_tokens"`
	MaxTokens   int64         `json:"max_tokens"`
	Regions     []regionDelta `json:"regions"`
}

// regionDelta is RegionDelta, externally tagged; an unknown variant leaves
// every field nil and is skipped.
type regionDelta struct {
	Set    *regionSnapshot `json:"Set"`
	Append *regionAppend   `json:"Append"`
	Clear  *regionName     `json:"Clear"`
	Remove *regionName     `json:"Remove"`
}

type regionAppend struct {
	Name          string          `json:"name"`
	Entries       []entrySnapshot `json:"entries"`
	CurrentTokens int64           `json:"current_tokens"`
}

type regionName struct {
	Name string `json:"name"`
}

// toolCallRecord is the part of ToolCallRecord vigil uses (arguments, a
// string of JSON, is not read).
type toolCallRecord struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Result json.RawMessage `json:"result"` // null while pending
}

// messageRecord is MessageRecord.
type messageRecord struct {
	Role    string `json:"role"`
	Content text   `json:"content"`
}

// runRecord is RunRecord, externally tagged: exactly one field is set for a
// known variant, none for an unknown one.
type runRecord struct {
	Header *struct {
		Identity runIdentity `json:"identity"`
		Meta     runMeta     `json:"meta"`
	} `json:"Header"`
	OwnershipChanged *struct {
		MachineID string `json:"machine_id"`
		WorldID   string `json:"world_id"`
		At        int64  `json:"at"`
	} `json:"OwnershipChanged"`
	Inference *struct {
		Stage     string `json:"stage"`
		Iteration int64  `json:"iteration"`
		Request   struct {
			Model string `json:"model"`
		} `json:"request"`
		Response struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			CachedTokens     int64 `json:"cached_tokens"`
			CacheWriteTokens int64 `json:"cache_write_tokens"`
		} `json:"response"`
		At int64 `json:"at"`
	} `json:"Inference"`
	ToolBatch *struct {
		Calls []toolCallRecord `json:"calls"`
		At    int64            `json:"at"`
	} `json:"ToolBatch"`
	ContextCheckpoint *struct {
		Snapshot contextSnapshot `json:"snapshot"`
		At       int64           `json:"at"`
	} `json:"ContextCheckpoint"`
	ContextDiff *struct {
		Delta contextDelta `json:"delta"`
		At    int64        `json:"at"`
	} `json:"ContextDiff"`
	Message *struct {
		Message messageRecord `json:"message"`
		At      int64         `json:"at"`
	} `json:"Message"`
	StatusChanged *struct {
		Status string `json:"status"`
		At     int64  `json:"at"`
	} `json:"StatusChanged"`
	Checkpoint *struct {
		Meta    runMeta         `json:"meta"`
		Context contextSnapshot `json:"context"`
		At      int64           `json:"at"`
	} `json:"Checkpoint"`
	Progress *struct {
		Meta  runMeta      `json:"meta"`
		Delta contextDelta `json:"delta"`
		At    int64        `json:"at"`
	} `json:"Progress"`
	InferenceUsage *usageRecord `json:"InferenceUsage"`
	ToolCallDone   *struct {
		CallID string `json:"call_id"`
		At     int64  `json:"at"`
	} `json:"ToolCallDone"`
}

// usageRecord is HEAD's InferenceUsage.
type usageRecord struct {
	Kind             string `json:"kind"`
	Stage            string `json:"stage"`
	Iteration        int64  `json:"iteration"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	CachedTokens     int64  `json:"cached_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	At               int64  `json:"at"`
}

// known reports whether the record is a variant vigil folds.
func (r *runRecord) known() bool {
	return r.Header != nil || r.OwnershipChanged != nil || r.Inference != nil || r.ToolBatch != nil ||
		r.ContextCheckpoint != nil || r.ContextDiff != nil || r.Message != nil || r.StatusChanged != nil ||
		r.Checkpoint != nil || r.Progress != nil || r.InferenceUsage != nil || r.ToolCallDone != nil
}

// name is the record's variant name (for notes).
func (r *runRecord) name() string {
	switch {
	case r.Header != nil:
		return "Header"
	case r.OwnershipChanged != nil:
		return "OwnershipChanged"
	case r.Inference != nil:
		return "Inference"
	case r.ToolBatch != nil:
		return "ToolBatch"
	case r.ContextCheckpoint != nil:
		return "ContextCheckpoint"
	case r.ContextDiff != nil:
		return "ContextDiff"
	case r.Message != nil:
		return "Message"
	case r.StatusChanged != nil:
		return "StatusChanged"
	case r.Checkpoint != nil:
		return "Checkpoint"
	case r.Progress != nil:
		return "Progress"
	case r.InferenceUsage != nil:
		return "InferenceUsage"
	case r.ToolCallDone != nil:
		return "ToolCallDone"
	}
	return "unknown"
}

// at is the record's time (the Header's: its meta's updated_at).
func (r *runRecord) at() int64 {
	switch {
	case r.Header != nil:
		return r.Header.Meta.UpdatedAt
	case r.OwnershipChanged != nil:
		return r.OwnershipChanged.At
	case r.Inference != nil:
		return r.Inference.At
	case r.ToolBatch != nil:
		return r.ToolBatch.At
	case r.ContextCheckpoint != nil:
		return r.ContextCheckpoint.At
	case r.ContextDiff != nil:
		return r.ContextDiff.At
	case r.Message != nil:
		return r.Message.At
	case r.StatusChanged != nil:
		return r.StatusChanged.At
	case r.Checkpoint != nil:
		return r.Checkpoint.At
	case r.Progress != nil:
		return r.Progress.At
	case r.InferenceUsage != nil:
		return r.InferenceUsage.At
	case r.ToolCallDone != nil:
		return r.ToolCallDone.At
	}
	return 0
}
