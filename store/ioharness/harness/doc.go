// Package harness is the Go twin of io-harness's Store: what a harness does
// to a run store (start runs, checkpoint steps, hold leases, ask for and
// take decisions, keep memory), statement for statement as io-harness does
// it, so that what it writes io-harness itself can open and resume. The
// demo and the tests' fixtures write their stores through it; vigil reads
// them through store/ioharness, which this package does not import (what
// both must agree on is store/ioharness/internal/schema).
//
// It is named for what it stands in for, the harness side of the store,
// rather than "writer": it also reads what a harness reads of its own runs
// (LastStep, SpentTokens, a request's decision, memory), and "writer" is a
// name callers already give their own variables and helpers.
//
// Create, OpenWriter and Memory give a Store for the write API, which
// mirrors io-harness's Store methods statement for statement (write*.go):
// the schema is io-harness 0.66's (internal/schema's schema.sql), Create
// sets WAL only on a new file of its own, OpenWriter brings an older store
// up to it in one transaction as io-harness's own open would (migrate.go),
// and step commits check the lease generation so a displaced driver cannot
// commit. JSON columns are written byte for byte as serde_json writes them
// (serdejson.go), memory writes keep io-harness's caps, and every value
// reads back in io-harness as it would have written it. The API takes the
// typed vocabulary (store.Outcome, store.Verdict, store.AgentEventKind, …);
// io-harness's words are the vocabulary's, so they are written as they are.
// Writes go through the handle's one connection, whose transactions are
// BEGIN IMMEDIATE (write.go).
package harness
