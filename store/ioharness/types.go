package ioharness

import "time"

// Event is a generic audit event of a run (sandbox, MCP, checkpoint).
type Event struct {
	RowID  int64
	RunID  string
	Step   int
	Source string // sandbox, mcp, checkpoint
	Kind   string
	Detail string

	Backend string         // sandbox: the execution backend
	Server  string         // mcp: the server
	Tool    string         // mcp: the tool
	OK      *bool          // mcp: whether a call succeeded
	Millis  *time.Duration // mcp: how long a connect or call took; nil when not recorded (NULL, as io-harness writes for discover and disconnect)
}

// MemoryEntry is one durable cross-run memory fact.
type MemoryEntry struct {
	Workspace string
	Key       string
	Value     string
	RunID     string
	Step      int
	CreatedAt time.Time
	Kind      string // fact or decision
	Pinned    bool
}

// ContextAssembled is the context_events kind of a turn's assembled
// window, with the assembler's estimate: the rows ContextSamples reads.
// io-harness's other kinds (memory_write, compaction, …) are audit rows.
const ContextAssembled = "assembled"
