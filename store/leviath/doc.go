// Package leviath reads Leviath run directories as a store.Source: a runs
// directory (~/.leviath/runs, $LEVIATH_RUNS_DIR) holding one directory per
// run, each with meta.json and run.lvr. It is built from the format notes
// in docs/formats/leviath.md (Leviath 0.1.x to 0.4.0) and is read-only: it
// opens every file O_RDONLY, creates nothing, and refuses every decision.
//
// # What is read
//
//   - run.lvr, the journal: "LVR1", a u16 big-endian version (1; a newer one
//     is refused, naming both versions), then frames of a u64 big-endian
//     length and a compact JSON RunRecord (externally tagged). The fold
//     follows Leviath's (docs/formats/leviath.md, "Records and the fold"):
//     Header, OwnershipChanged, ContextCheckpoint, ContextDiff,
//     Progress (RunMeta + ContextDelta with Set/Append/Clear/Remove),
//     Checkpoint, StatusChanged, Message, Inference, ToolBatch, and at HEAD
//     InferenceUsage and ToolCallDone. Unknown variants (records and region
//     deltas) are skipped; a known record whose fields do not decode is
//     skipped with a timeline row saying so.
//   - Reading is incremental: each run keeps the offset after its last
//     whole frame and a refresh reads only the bytes after it. A frame
//     running past the end of the file is not complete yet (the writer may
//     be mid-append): it is read again, from its start, next time. A whole
//     frame that is not JSON is damage: the read stops there (a timeline
//     row and Problems say so) until a daemon restart appends its first
//     job (OwnershipChanged + ContextCheckpoint) after the bad bytes; the
//     read resumes at that frame, found by its raw `{"OwnershipChanged":`
//     start (which no JSON string can contain unescaped). Leviath's own
//     lenient reader never sees those later frames.
//   - meta.json, when it is newer than the journal (by updated_at; the
//     journal is written first, so normally it is not) or the only file
//     (a run the CLI queued, status starting).
//   - interactions.json, while a run waits: the text of the prompt.
//
// context.json, stages.json, fanout.json and the stage logs are not read:
// the journal holds the same window, and stage names come from the meta.
//
// callback_secret (with callback_url and the free-form metadata map) has no
// field in the decoded types: it is dropped at decode time wherever it
// sits (meta.json, every Header, Progress and Checkpoint).
//
// # Runs
//
// A run's id is its directory name; Goal is meta.task, Workspace the
// workdir, Provider the model label ("anthropic/claude-sonnet-4-5"),
// StartedAt started_at. ParentID is parent_run_id (or the run whose
// children list names it); Depth is meta.depth. The status maps onto the
// vocabulary store.StateOf reads:
//
//	Leviath status          Status     Outcome                request
//	starting, running       running    ""
//	waiting_input           running    ""                     an open Question
//	paused (HEAD)           paused     ""                     (no lease: reads paused)
//	complete                completed  complete               (Summary.Success)
//	complete_interactive    completed  complete_interactive   (Summary.Success)
//	error                   completed  error
//	cancelled               completed  cancelled
//	anything newer          as written ""
//
// complete_interactive still accepts follow-ups: if the journal moves on,
// the run goes back to running through Changes. A finished run has a
// Summary: assistant turns, meta prompt+completion tokens, updated_at −
// started_at. An unfinished run has StatsKnown false: RunStats counts its
// assistant turns and the spend attributed to them (below).
//
// A run that cannot be read does not stop the directory from opening: it is
// listed from meta.json when that decodes (its Steps return the typed
// error), else as a run with status completed, outcome "unreadable" and the
// reason as its goal. Problems lists them all. A single run directory whose
// journal is refused does not open.
//
// # Timeline
//
// One row (a Step) per transcript entry, taken from the `conversation` region
// (or a `history`-kind region; docs/formats/leviath.md, "Timeline"):
// UserMessage, one AssistantTurn (its tool calls in ToolCall), each
// ToolResult. Sliding windows evict, compactions rewrite and restarts
// re-checkpoint, so a window that is replaced (Set, ContextCheckpoint,
// Checkpoint) is matched in order against what the region held: entries seen
// before keep their row, only new ones add rows. Rows are also added for
// Message records, for journaled status changes ("status: waiting_input",
// "status: error — …"), for daemon restarts (OwnershipChanged) and for
// journal damage.
//
//   - Number is the assistant turn the row belongs to: a turn increments it;
//     a tool result takes its call's turn; other rows the current one (0
//     before the first turn).
//   - Tokens is, on assistant rows, the growth of meta prompt+completion
//     tokens since the previous assistant row (the spend of that turn);
//     0 elsewhere.
//   - Decision is one line ("user: …", "assistant: …", "result bash",
//     "error http_get", "status: …"); ResultHead is a tool result's first
//     line.
//   - RowIDs are derived from the journal (ids.go): increasing within a
//     run, unique across runs, stable across refreshes, opens and
//     processes, so a written cursor (CursorCodec) resumes in another
//     process.
//
// StepDetail reads the entry back from its frame (the text is not kept in
// memory): a user message is the Prompt; an assistant turn is TurnText,
// ToolCallFull (one "name arguments" line per call), its ProviderCalls
// and, at HEAD, tool timings (Observations, whole seconds); a tool result
// is Result with the call it answers in ToolCallFull.
//
// # Context samples and provider calls
//
// One ContextSample per replay point (every ContextCheckpoint, ContextDiff,
// Progress and Checkpoint, as `lev context` shows them). Estimated is the
// window's total_tokens: Leviath's own estimate (each entry is ceil(bytes/4)).
// Step is the turn the window feeds (assistant turns so far + 1). Reported is
// the prompt_tokens of the first stage InferenceUsage (HEAD) journaled after
// the point and before the next one — the provider's count of the call made
// with that window (system prompt and tool schemas included, which the
// estimate leaves out). It stays nil otherwise, and always in 0.1.x
// journals: it is never filled with the estimate. A count that arrives after
// its point was handed out comes again through Changes.
//
// ProviderCalls are the InferenceUsage records (and Inference, if written):
// Step is the turn the call produced, Attempt its index within that turn,
// FinishReason names non-stage kinds ("compaction call"). Latency is not
// journaled (0).
//
// # Waiting and decisions
//
// Leviath keeps human-in-the-loop prompts in the daemon's memory; the
// journal says only status waiting_input. Each stretch of waiting_input is
// one read-only Question request (ID "<12-hex run suffix>/<n>"): its text
// comes from interactions.json when present (the first object with a
// "body"), else a generic line; HEAD's waiting_on reason is added to the
// context. It resolves when the status leaves waiting_input. Classify
// returns Deferred with NotDurable ("Leviath's prompts are not durable:
// answer it in lev"); Decide returns a *store.RefusedError; ReadOnly is true
// with the same reason.
//
// # Liveness
//
// Every unfinished, unpaused run gets a synthesized lease, renewed at
// meta.updated_at (or HEAD's last_progress_at), TTL LeaseTTL (15 min). The
// daemon writes pid 0, so its lease owner ("lev-daemon@<machine>-<world>")
// names no pid: store.LivenessOf reads it live within the TTL and lapsed
// after (stale: "may be hung"), never dead. Only a non-zero pid in a meta
// written on this machine (the run's machine_id equals <runs>/../machine-id)
// is put in the owner as "<pid>-…", so a gone process reads as crashed; a
// pid from another machine is not checked. Generation counts
// OwnershipChanged records. RecordsLeases is true.
//
// # Changes, Watch, tail
//
// Head and Changes refresh from disk (a ReadDir, a few stats per run, the
// appended bytes) and answer from an in-memory change log: "after the
// cursor" is a binary search, O(new data). A cursor written down and read
// back by another process (CursorCodec) is marks per run, compared with
// what that process read (cursor_codec.go). A journal of 32 MiB or more is
// folded in the background after Open (folding.go). Changes returns new runs before their rows, rows in
// order, new and newly reported samples, new provider calls, and requests
// opened or resolved; Reset when a run directory was deleted or a journal
// replaced, shortened or written over in place (other bytes under what was
// read: a fingerprint of its first 4 KiB and of the 4 KiB before the read
// offset, taken at each read, no longer matches).
//
// A long journal's fold is summarized in vigil's user cache directory
// (fold_cache.go; docs/formats/leviath.md, "The fold cache"): the next
// process checks the summary against the journal (path, device, inode,
// size, mtime, sampled bytes) and folds only what was appended after it.
//
// Watch is directory mode on the runs directory, counting run.lvr,
// meta.json and interactions.json events, with a Version that hashes the
// run directories and those files' size, mtime and inode (it moves as soon
// as bytes are appended).
//
// `vigil tail RUN` needs nothing special: each transcript entry is a row as
// soon as its frame is read, so printing every new StepRow of the run's tree
// as "#<run> step <Number>  <Decision>  →  <ResultHead>  (<Tokens> tokens)"
// shows each user message, assistant turn (best with its ToolCall after a
// " · ") and tool result as it arrives, plus status changes and restarts.
package leviath
