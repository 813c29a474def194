// Package geminicli reads Gemini CLI's chat files (@google/gemini-cli) as a
// run store: each session a run, each sub-agent a child run, each model
// turn a step with its tool calls and their results.
//
// The CLI writes one JSONL file per session under
// <home>/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl, and one per
// sub-agent under chats/<parent session id>/<sub-agent id>.jsonl. A file is
// a header line, then messages, $set patches and $rewindTo lines, and a
// message is appended again each time it changes (its tokens, its tool calls
// as they finish): the last line per id wins, in the place of the first.
// conv folds a file the way the CLI loads it back.
//
// The files record no process, so whether a session is still being driven
// is not known: a run is completed when its newest message is a model answer
// without a tool call (or a sub-agent's complete_task), running otherwise.
// A tool call waiting on a permission is not written until it finishes, so
// it never shows here. Decisions are not taken through this adapter.
//
// Reading: Runs reads each file's head and tail; Steps and the details read
// one session whole; Changes reads only the complete lines appended after
// its cursor, numbering them from a per-file index it extends as it reads.
package geminicli
