package harness

import (
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// Event is a generic audit event of a run (sandbox, MCP, checkpoint).
type Event = store.AuditEvent

// MemoryEntry is one durable cross-run memory fact.
type MemoryEntry = store.MemoryEntry

// ContextAssembled is the context_events kind of a turn's assembled
// window, with the assembler's estimate (RecordContextEvent's kind for it).
// io-harness's other kinds (memory_write, compaction, …) are audit rows.
const ContextAssembled = schema.ContextAssembled
