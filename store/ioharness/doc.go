// Package ioharness reads io-harness's SQLite run store, so vigil can browse
// and tail what io-harness writes and decide what its runs wait on. Writing
// runs as io-harness does (the demo does, and the tests' fixtures) is the
// harness package's beside it (store/ioharness/harness); what both must
// agree on about a store (its schema, how shared columns are written) is
// internal/schema's. This package does not import the writer. The format
// notes it follows are docs/formats/io-harness.md.
//
// # Reading
//
// Open gives a browsing Store: a pinned read-only connection that never
// writes a byte to the file nor creates one beside it, and a writing
// connection opened only by the first decision (internal/sqlitex has the
// mechanics and why). A program may write a store through the harness
// package and browse it through Open at once: nothing here opens the
// file other than through SQLite, so no lock of its writer is lost. It reads
// every store format from io-harness 0.22 to 0.66: io-harness only ever
// adds tables and nullable or defaulted columns, so an older store is read
// by leaving out what it lacks (schema.go) rather than refused. A store
// stamped with a user_version above FormatVersion was written by a newer
// io-harness and is refused before a browsing connection opens it (the
// header is read on an immutable connection, which creates nothing).
//
// io-harness indexes none of its per-run tables by run_id, and vigil never
// adds an index to a store it reads. Reads that must be exact — the
// canonical trace, the timeline, a step's detail, a run's events — read
// every row of the run through row-id bounds learned once per table and
// run (rows.go): a run created after the table was first read needs no
// learning, any other is learned by one filtered pass, and afterwards each
// read visits only the range the run's rows occupy. One step's rows of a
// long run are read from the blocks of ids that may hold its step, learned
// once per table and run (stepzones.go). What was learned of a table is
// vouched for on each use by one witness (witness.go), and learned again
// when an id may have been handed out twice. A backward scan that
// stops near a run's first step (scan.go) is kept only for counts it cannot
// get wrong (RunStats: the rows it may miss are step-1 retries, which carry
// no tokens). Every read is its own short chunk, so none pins the WAL, and
// no value that may be huge is handed to SQL: its head is read in pieces
// (bigfields.go).
//
// The schema is learned at open and learned again whenever PRAGMA
// schema_version changes (a newer io-harness's open adds run_leases,
// tool_attempts, … to a store vigil is reading).
//
// # A run's later lives
//
// io-harness drives runs again in ways its status column does not show
// (lifecycle.go): resume re-drives a step-, time- or cost-capped run under a
// lease with its status left completed; resume_with_decision drives a
// paused run with no lease at all; a crash resume replays the step a dead
// driver was parked on and asks in a new row, leaving the old one to
// nobody; a driver that dies inside a tool call it cannot repeat leaves an
// open tool_attempts row and every resume waits for a person. The adapter
// reads these from the store's own records into Run.Resumable,
// Run.LeaselessDriver, Run.Recovery and Request.Standing, and Changes tells
// them again when they change without the run's row changing.
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
// IMMEDIATE transaction that first checks, from the store as it is under
// that lock, that the run can read it (Classify): a live run parked on
// that request. A paused (deferred) run's request is refused, because
// io-harness's resume refuses a request that is already decided; an
// orphan, an ended run's request and one whose driver is gone are refused
// too. Leases (lease.go) are io-harness's: a run tree's root holds one,
// its owner string starts with the driver's pid, and a parked run's lease
// lapses while it waits without meaning the driver is gone.
//
// The package registers itself as the "io-harness" format, and as the
// fallback: a path no other format claims is opened here, and the refusal
// says what the path is not.
package ioharness
