// Package opencode reads opencode's session database (opencode-ai 1.18,
// $XDG_DATA_HOME/opencode/opencode.db: SQLite in WAL mode, written live by
// the CLI) as a store.Source. docs/formats/opencode.md says what vigil
// reads and shows; the tables are opencode's
// packages/opencode/src/session/session.sql.ts and the JSON in their data
// columns its session/message-v2.ts types.
//
// Browsing goes through internal/sqlitex: a preflight of the path and
// header, one pinned read-only connection that creates nothing beside the
// file and never changes its journal mode, short reads whose result sets
// close before each call returns. Nothing here opens the file otherwise.
//
//   - A run is a session row; a sub-agent (the task tool) is a child run by
//     its parent_id. Goal is the title, Workspace the directory.
//   - A step is an assistant message: opencode writes one per model call.
//     Its row comes first; each tool part is a row after it, joined to its
//     call by callID, saying result or error as the part's state says. A
//     message opencode is still writing is one Pending row saying its last
//     tool's state (pending bash, running bash).
//   - Row ids (steps.go, rowID): the rowid of the message's newest part
//     shifted left 16 bits, the low bits saying which row. In flight the
//     low bits are below 1<<15 and grow as tools move on; finished, they
//     are 1<<15 and up. opencode writes the step-finish part, then
//     completes the message, then starts the next one, so a turn's
//     finished rows have larger ids than any row of its flight and replace
//     its pending row (store.AppendStepRows); StepDetail takes both.
//   - Tokens: a step-finish part's usage is stored minus the cache reads
//     and writes (input) and minus the reasoning (output), as getUsage in
//     session/index.ts computes it for the cost; ProviderCalls put the
//     provider's figures back together. A step-finish without tokens is
//     "not reported" (nil), never 0. The context window is in opencode's
//     config, not its database: it is not shown.
//   - Status is read from the session's last message, as opencode's prompt
//     loop decides whether to go on (runs.go, setStatus). opencode writes
//     no pid file or heartbeat: RecordsLeases is false and an unfinished
//     session reads "running?".
//   - Requests: none. opencode asks permissions over its own server and
//     keeps them in memory; decisions go through vigil gate.
//   - A row whose JSON does not decode is one problem (Problems: table,
//     rowid, id); the rest of its session still shows.
//
// The first frame (recent.go) reads the newest trees whose messages fit a
// page (store.RecentRunner) and a cursor following only them
// (store.QuickHeader): a session's count of model calls reads the data of
// every message it has, and telling which sessions still run reads every
// session's last message. Head reads that without the counts.
//
// Changes (changes.go) follows session and message by rowid and reads an
// unfinished assistant message again by its primary key until opencode
// finishes it: meanwhile its pending row comes again whenever its id grew,
// then its turn comes whole. Part rows change in place and
// their time_updated has no index, so parts are only read through their
// message (part_message_id_id_idx), never by scanning the table.
package opencode
