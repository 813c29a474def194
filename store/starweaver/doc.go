// Package starweaver reads Starweaver session databases (starweaver.sqlite,
// SQLite, Starweaver 0.7.0 through 0.15.0) as a store.Source. It is built
// from the format notes in docs/formats/starweaver.md.
//
// # Opening
//
// Open answers what the file system and the 100-byte header can before a
// browsing connection opens the file (missing, a directory, empty, not
// SQLite, truncated), then reads starweaver_schema_migrations: migrations
// 1–4 must be there (0.7.0), a migration numbered above 19 (0.15.0) or an
// id vigil does not know is refused as newer, and the *_records tables must
// exist. Browsing goes through one pinned read-only connection (busy_timeout
// 5000, internal/sqlitex) that never writes, never creates a file beside the
// database (so a refused file gets no -wal/-shm companions), never changes
// the journal mode and never runs Starweaver's migrations. Every refusal is a one-line *store.Error matching a
// store.Err* sentinel, worded for Starweaver. Detect says whether a path is a Starweaver database.
//
// Every record column is decoded by schema id: an envelope of the expected
// schema and version 0, 1 or 2, or a legacy bare value (except claims).
// Records of another schema or a newer version are skipped wherever they
// appear. The legacy tables of migration 1 are never read.
//
// # Runs
//
// A run is a run_records row; its id is Starweaver's run_<uuid>.
//   - A subagent (parent_run_id) is a child in the tree; Depth counts
//     parents present in the file.
//   - A continuation (restore_from_run_id) is a root of its own, TurnKind
//     "continuation", its Goal the prompt the resume wrote (which names the
//     run it continues). Not a child: continuing is not delegating, a chain
//     of resumes would nest ever deeper, and the runs list should show each
//     stretch's own state. The run it continues reads finished, outcome
//     "continued" (0.7's CLI resume leaves it waiting for ever).
//   - Runs of a session 0.15 deleted are left out.
//   - Goal is the run's text input (the session title when it has none);
//     Workspace the session's (0.15's object: its display label); Provider
//     the provider the run's responses name; StartedAt created_at.
//
// Status comes from the run record only (a run parked on a human also has a
// RUN_CANCELLED display event), mapped onto what store.StateOf reads:
//
//	Starweaver status            Status     Outcome
//	queued, starting, running    running    ""
//	waiting                      paused     ""           (continued: completed, "continued")
//	completed                    completed  finished     (Summary.Success)
//	failed                       failed     failed
//	cancelled                    completed  cancelled
//
// A finished run has a Summary: its steps and tokens (below), updated_at −
// created_at. Unfinished runs are counted by RunStats.
//
// # Timeline
//
// Rows come from the raw stream (stream_records), which every committed
// run has and which carries turn numbers and usage; display records do
// not, and feed the step detail instead. RowID is the stream row's SQLite
// rowid: stable, increasing within a run, unique in the file. A row is
//   - a model turn (model_response): Number its run_step, Decision the first
//     line the model wrote (else the tools it called), ToolCall its calls
//     ("name {arguments}"; …), Tokens the response's total_tokens;
//   - a tool return: "result <tool>", "error <tool>", "approval required:
//     <tool>" or "deferred: <tool>", under its turn's number, ResultHead the
//     first line of what came back (or the approval/deferred id);
//   - suspended, run_failed or run_cancelled, under the last turn's number.
//
// Records a subagent's run merged into its parent's stream (source set)
// are not the parent's rows; they are the subagent's timeline when the
// subagent has no stream of its own. A run's Steps is its highest turn,
// Tokens the sum of its responses' total_tokens.
//
// StepDetail of a turn: its text (TurnText, thinking marked), its calls in
// full, the returns of those calls (Result), the run's prompt on its first
// turn, the checkpoints taken at that run_step and the HITL display
// messages about its calls (Observations), and its provider call. Of a
// return row: the whole result and the call it answers.
//
// ProviderCalls are the model responses: provider, model, input, output,
// total and cache tokens, finish reason, the response's timestamp.
// Starweaver records no request time: LatencyMS is 0.
//
// ContextSamples is empty: a sample sets the context assembler's estimate
// beside the provider's count, and Starweaver records only the provider's
// count (PromptTokens of each provider call). Nothing is made up to fill
// the estimate.
//
// AgentEvents are checkpoints ("checkpoint", at their run_step) and
// delegations ("spawn", naming the child run).
//
// # Requests and decisions
//
// An ApprovalRecord is an Approval: Act the tool, Target its path, command
// or URL argument, Content the request (arguments, reason, toolset). A
// DeferredToolRecord is a Question: a call whose result someone outside
// the run supplies. A request is unresolved while its record is pending
// (a deferred tool: pending, running or waiting) and its run has not
// ended: a record a completed, failed or cancelled run left pending waits
// on nobody, is left out of Requests(unresolvedOnly) and comes through
// Changes as closed when its run ends.
//
// Decide writes what Starweaver's decide_approval writes
// (docs/formats/starweaver.md, "Deciding"): status approved or denied,
// decision {status, decided_by "vigil", decided_at,
// reason?}, updated_at (record and column), 0.15's revision incremented,
// every other field and its order kept — as a compare-and-set on the
// pending record inside BEGIN IMMEDIATE, on a read-write connection
// (`_txlock=immediate`) opened on the first decision. Answering a deferred
// tool completes it as `starweaver deferred complete` does (response =
// the answer as JSON, or as a JSON string). Someone deciding first makes
// it Won false with what won. It refuses with a *store.RefusedError a run
// a resume claim holds (Deferred: the resume took the run's decisions and
// rewrites these records when it commits; a started claim never expires)
// and a run that has ended or been continued (Closed), and approving an
// ask_user_question record (0.15 refuses it too). Classify says the same
// without writing, from the claims the last read saw: a waiting run's
// requests are DeliveryUnknown (the next resume reads the decision), an
// active run's too (Starweaver records no lease).
//
// # Liveness
//
// Starweaver 0.7 records no lease or heartbeat, so RecordsLeases is false,
// Run.Lease is nil and liveness is unknown: an active run reads
// "running?". 0.15's run_admissions leases are not read.
//
// # Changes and Watch
//
// Head takes the highest rowid of run_records, stream_records,
// checkpoint_records, approval_records and deferred_tool_records, the open
// runs (active, or waiting and not continued) with their row signature
// (updated_at and record length), the undecided requests with their keys,
// and the claims table's signature with each claimed run's claim; the
// cursor can be written down and read back in another process
// (store.CursorCodec: vigil agent's token). Changes reads rows above each mark
// (pages of sqlitex.ChangesPage, More when a page is full), re-reads open
// runs and undecided requests by primary key, and re-sends runs whose
// claim came, went or changed state since the cursor's claims (their
// requests' delivery changed);
// it returns the next cursor and leaves the one it was given alone. No
// timeline row is ever folded (Kind stays StepTurn): Starweaver records
// no retry rows of its own, and what a turn says is never read to decide
// what it is. A mark that went backwards is a Reset. Watch is the file, its -wal and
// -journal, with PRAGMA data_version on the read connection as the probe.
package starweaver
