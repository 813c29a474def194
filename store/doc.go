// Package store is the contract between vigil and the run stores it reads:
// what a run, a step and a request are, whatever format wrote them, and
// how a reader keeps up with a store that is being written. It holds no
// format and no driver; the adapters beside it do (store/ioharness,
// store/starweaver, store/leviath), and this package imports none of them.
//
// # Sources
//
// A Source is one open store. Its methods return the domain types in
// types.go — Run, Step, StepDetail, ContextSample, Request, AgentEvent,
// ProviderCall — never rows, connections or open cursors, and they may be
// called from several goroutines at once. A run id is the format's own id
// as a string; a sub-agent is a run of its own with a ParentID.
//
// A Source is read-only except for Decide, the one write a viewer makes,
// and even that is a compare-and-set on the undecided request that a
// source refuses (RefusedError) when the run could not read it now.
// Browsing never writes a byte to the store, and no source ever changes a
// store's journal mode or schema.
//
// # Reading and tailing
//
// A reader takes a cursor first, then loads what it shows, then follows:
//
//	cur, _ := src.Head(ctx)           // where the store ends now
//	runs, _ := src.Runs(ctx)          // load the screen
//	for range wakeups {               // a file watcher (Source.Watch) or a timer
//		ch, next, err := src.Changes(ctx, cur)
//		... fold ch into what is shown (rows are keyed by RowID) ...
//		cur = next                    // and again while ch.More
//	}
//
// Rows committed between Head and the load come again from Changes; readers
// key rows by id, so they are folded once. Changes never modifies the
// cursor it is given: a cursor is a value that can be kept, retried or
// held by another goroutine, and reading from it twice returns the same
// changes. Its cost is O(new rows + rows that can still change in place),
// never O(store). Changes.Reset says the store at the path is not the one
// the cursor was made on: drop everything and load again.
//
// AppendStepRows folds the StepRows that Changes returns onto a timeline
// read with Steps. It folds by StepRow.Kind, which each adapter sets from
// its own format's facts (io-harness's retry rows are recognised by
// io-harness's adapter, nowhere else); it never looks at display text.
//
// # The contract: Core, capabilities, Complete
//
// A format implements Core (source.go): its runs, steps, requests, tail
// and its one write. Whatever else it can answer — one run by id, the
// newest page, a windowed timeline, a field written whole, its facts, who
// decided, cursors another process resumes, a canonical trace … — it says
// by implementing the optional interfaces in capabilities.go, one each.
// Complete (complete.go) makes a Core a Source: it finds those interfaces
// once, when the store is opened (Open does it for every format), and
// answers the ones a format lacks with the fallback written there once —
// Run from Runs and RunStats, a cut field staying cut, no facts recorded,
// cursors that cannot be resumed, and so on. Capabilities says which
// answers are native, so a caller that would do better without a slow
// fallback (the explorer's windowed timeline) or a status line can tell;
// callers never assert a capability's interface.
//
// Wrappers — store/union, vigil serve's per-session view, remote's ssh
// link — are Sources themselves and forward every method to the source
// inside, whose Capabilities they report (remote/wrappers_capability_test.go
// holds them to it). Two interfaces stay for a caller to assert, as what
// a source may genuinely not be: StoreSet (multi.go, several stores as
// one), and, on a cursor Changes returned with Reset, ResetReason.
//
// # Facts beyond steps
//
// facts.go names what a store may record about a run besides its steps,
// requests and context samples: the token breakdown of its provider calls
// (Usage, summed by SumUsage), the citations and server tools of a step
// (on StepDetail), checkpoints and resumes, gate failures and attempts,
// memory, the context assembler's other events, sandbox and MCP audit,
// compaction folds, and what a run holds open (its plan, children queued
// for a slot, messages, processes) and does inside a step before it
// commits (the live stream, RunEvent with a LiveKind the adapter maps).
// They come through four more capabilities: RunFacts (one run's facts),
// Activity (what a tree's runs hold open and their newest stream
// events), StepDetails (every step's detail in one pass) and LastWrite
// (when the store was last written, from its own rows). A source names the
// facts it read in a FactSet; one it does not name is "not recorded by
// this store" (NotRecorded), which a view says as such: never an error,
// never an empty list passed off as nothing having happened.
//
// # Several stores
//
// store/union reads several sources as one (vigil A B ssh://h/C): its run
// and request ids are "<store prefix>/<the store's own id>", every per-run
// read and decision goes to the owning store, and it implements StoreSet
// (multi.go), which says which store an id is in and which stores are
// offline. A store offline never fails the set's reads; only all of them.
//
// # Vocabulary
//
// Statuses, outcomes, verdicts, request kinds, tree-event kinds, step
// kinds, policy words, states, liveness and delivery are named types with
// constants (vocab.go). Code outside an adapter compares and assigns only
// these constants; each adapter is the one place where its format's own
// words are read and mapped onto them. Outcome is open-ended: an adapter
// passes a word it does not map through as Outcome(word), and Succeeded and
// Stopped say what the shared code needs to know about it. StateOf turns a
// run's status, lease and waiting requests into the State a person sees.
//
// A status alone does not say where a run is once its harness has resumed
// it, so an adapter adds what its own records say, and the shared code only
// reads that: on a Run, Resumable (an ended status whose outcome a resume
// continues from; with a lease of its own the run is Reopened, not Ended),
// LeaselessDriver (a resume that records no driver drives it) and Recovery
// (its driver died inside a tool call that cannot be repeated: StateRecovery);
// on a Request, Standing (open, parked on, or orphaned — a row no driver
// will read, which Classify refuses as the Orphaned delivery and which does
// not count as waiting: Request.Waits). OwnerCheck says when a lease's
// owner pid cannot be checked from vigil's pid namespace (Liveness Foreign).
//
// # Errors
//
// Every store problem is a *Error: the path, one of the sentinel errors
// (ErrNotFound, ErrNotAStore, ErrNewerFormat, ErrCorrupt, …) that callers
// test with errors.Is, and one line in the adapter's words. The sentinels'
// texts name no format.
//
// # Formats
//
// Adapters register a Format from init; a program imports the adapters it
// wants (a blank import is enough) and opens a path with Open, which asks
// each format's Detect and falls back to the format marked Fallback
// (io-harness), whose refusal says what the path is not.
//
// To add a format: write a package under store/ whose type implements
// Core (and whichever optional interfaces it answers better than
// Complete's fallbacks), maps its statuses, outcomes and step kinds onto
// the vocabulary, returns *Error values, keeps its cursor immutable, and
// calls Register in init with a Format whose Open returns it; then import
// it from cli.
// SQLite formats share their mechanics through internal/sqlitex.
package store
