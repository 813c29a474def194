// Package claudecode reads Claude Code's session store (format
// "claude-code"): the JSONL transcripts under <config>/projects/<cwd-slug>/
// (<config> is $CLAUDE_CONFIG_DIR, else ~/.claude), one per session and one
// per sub-agent under <session>/subagents/, and the live-session registry
// <config>/sessions/<pid>.json. It is read-only: decisions on a Claude Code
// session go through vigil gate.
//
// A session is a run and a sub-agent a child run, linked by its
// .meta.json's toolUseId. A step is a model turn: Claude Code writes one
// line per content block, each repeating the message's usage, so a turn is
// the consecutive assistant lines of one message id and its usage counts
// once; its tool calls are joined to their results by call id. A call
// without a result is running: the turn is a pending placeholder, which
// its committed row, with a larger row id, replaces. A session is live while the registry names
// it with a live pid; otherwise it has ended at rest, or was left inside a
// call (crashed), or, without a registry to read, its liveness is unknown.
//
// Runs reads each transcript's head and tail only; a cursor keeps each
// transcript's inode, the offset after its last complete line and the fold
// of the turn still open, so Changes reads appended bytes only. A line
// without its newline is a write in progress and waits. docs/formats/claude-code.md
// has the whole mapping.
package claudecode
