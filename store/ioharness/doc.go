// Package ioharness reads and writes io-harness's SQLite run store: the Go
// twin of io-harness's Store, over the same schema, so vigil can browse and
// tail what io-harness writes, decide what its runs wait on, and (the demo
// does) write runs io-harness itself can open and resume. The format notes
// it follows are docs/formats/io-harness.md.
//
// # Reading
//
// Open gives a browsing Store: a pinned mode=ro connection that never
// writes a byte to the file, and a writing connection opened only by the
// first decision (internal/sqlitex has the mechanics and why). It reads
// every store format from io-harness 0.22 to 0.66: io-harness only ever
// adds tables and nullable or defaulted columns, so an older store is read
// by leaving out what it lacks (schema.go) rather than refused. A store
// stamped with a user_version above FormatVersion was written by a newer
// io-harness and is refused before SQLite opens it.
//
// io-harness indexes none of its per-run tables by run_id. Reads of one
// run's rows walk row ids downward from the table's end in chunks and stop
// at the run's first step (scan.go): cheap for the recent runs people look
// at, each chunk its own short read so no scan pins the WAL.
//
// # Tailing
//
// SQLCursor holds the top row id of each append-only table and the few
// rows that can still change in place: unfinished runs, undecided
// requests, and each open run's newest turn still waiting for its provider
// count. Changes probes every table's top id in one statement, reads only
// what grew, and looks again at the open rows; it returns a new cursor
// whose maps share the old one's entries until written (internal/cow), and
// leaves the old cursor as it was.
//
// # What a row is
//
// io-harness writes a provider retry, a model escalation and a context
// compaction as rows of the steps table under the number of the step they
// precede, with no column saying so: only the decision text it writes for
// them does ("retry 2 after Timeout in 1s", "escalated after …",
// "compacting after …"). That text is this format's fact, so this package
// reads it (stepKind) and sets StepRow.Kind; the shared timeline folds by
// Kind and never reads text. No other format's rows go through it.
//
// # Deciding
//
// A decision is one guarded UPDATE on the undecided row inside a BEGIN
// IMMEDIATE transaction that first checks the run can read it
// (ClassifyDelivery): a live run parked on a human. A paused (deferred) run
// is refused, because io-harness's resume refuses a request that is
// already decided; an ended run or one whose driver is gone is refused
// too. Leases (lease.go) are io-harness's: a run tree's root holds one,
// its owner string starts with the driver's pid, and a parked run's lease
// lapses while it waits without meaning the driver is gone.
//
// # Writing
//
// Create, OpenWriter and Memory give a Store for the write API, which
// mirrors io-harness's Store methods statement for statement (write*.go):
// the schema is io-harness 0.66's (schema.sql), Create sets WAL only on a
// new file of its own, and step commits check the lease generation so a
// displaced driver cannot commit. The API takes the typed vocabulary
// (store.Outcome, store.Verdict, store.AgentEventKind, …); io-harness's
// words are the vocabulary's, so they are written as they are.
//
// The package registers itself as the "io-harness" format, and as the
// fallback: a path no other format claims is opened here, and the refusal
// says what the path is not.
package ioharness
