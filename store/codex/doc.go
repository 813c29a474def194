// Package codex reads Codex CLI sessions (@openai/codex) as a store.Source:
// the rollouts Codex writes as it goes, $CODEX_HOME/sessions/YYYY/MM/DD/
// rollout-<time>-<thread id>.jsonl, one JSON line per RolloutItem. It opens
// a rollout, a directory of them (the sessions tree) or CODEX_HOME, reads
// every file O_RDONLY, and never opens state_5.sqlite: the rollouts say
// all it shows. docs/formats/codex.md says what is read and how it shows.
//
// A rollout is a run (its session_meta.id); a sub-agent's rollout names
// its parent in session_meta.parent_thread_id (and source.subagent.
// thread_spawn), which makes it a child run. A step is one model
// response: the reasoning, text and tool calls Codex recorded for it,
// closed by the token_usage_record written with it (or, from a Codex that
// writes none, the token_count after it), each call joined to its output
// by call_id. A call without its output is running: its turn is a
// pending step until the output commits it.
//
// Codex records no liveness: a session whose task has started and not
// completed is running by its status, and vigil cannot tell a live CLI
// from one that died (RecordsLeases is false: the state reads unknown).
// Approvals and hooks are not written to the rollout: there are no
// requests, and the source is read-only.
package codex
