package otelexport

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"go.opentelemetry.io/otel/trace"
)

// IDs are derived, never drawn: every trace and span id is the first bytes
// of a SHA-256 over the store's identity and the ids the store itself gives
// the run and the row the span is made of, each part length-prefixed so no
// two tuples hash alike. Exporting the same store twice therefore sends the
// same ids, whatever process or machine does it.
//
//	trace id  = sha256("vigil-otel/1" | store | "trace" | root run id)[:16]
//	span id   = sha256("vigil-otel/1" | store | kind | run id | row id …)[:8]
//
// kind is "agent" (the run's invoke_agent span), "call" (a provider
// attempt, by its row id), "tool" (a tool call, by its step row id and its
// place in the turn) or "row" (the ledger's mark that a row was handled).

const idDomain = "vigil-otel/1"

// IDs derives ids for one store.
type IDs struct{ store string }

// NewIDs is the id scheme for the store whose identity is store (see
// Options.StoreID).
func NewIDs(store string) IDs { return IDs{store: store} }

func (x IDs) sum(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range append([]string{idDomain, x.store}, parts...) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// Trace is the trace id of the tree whose root is run root.
func (x IDs) Trace(root string) trace.TraceID {
	s := x.sum("trace", root)
	var id trace.TraceID
	copy(id[:], s[:16])
	if !id.IsValid() {
		id[15] = 1
	}
	return id
}

func (x IDs) span(parts ...string) trace.SpanID {
	s := x.sum(parts...)
	var id trace.SpanID
	copy(id[:], s[:8])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// Agent is the span id of run's invoke_agent span.
func (x IDs) Agent(run string) trace.SpanID { return x.span("agent", run) }

// Call is the span id of the chat span of the provider attempt with row
// id row.
func (x IDs) Call(run string, row int64) trace.SpanID {
	return x.span("call", run, strconv.FormatInt(row, 10))
}

// Tool is the span id of the i-th tool call (from 0) of step row row.
func (x IDs) Tool(run string, row int64, i int) trace.SpanID {
	return x.span("tool", run, strconv.FormatInt(row, 10), strconv.Itoa(i))
}

// row is the ledger's mark that step row row of run was handled (its tool
// calls read and sent): not a span id that is ever sent.
func (x IDs) row(run string, row int64) trace.SpanID {
	return x.span("row", run, strconv.FormatInt(row, 10))
}

// Conversation is the gen_ai.conversation.id of the tree whose root is
// root: the root run's id, qualified by the store (a run id is unique only
// within its store).
func (x IDs) Conversation(root string) string {
	s := x.sum("store")
	return hex.EncodeToString(s[:4]) + ":" + root
}
