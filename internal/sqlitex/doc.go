// Package sqlitex is the SQLite mechanics vigil's two SQLite formats
// (io-harness and Starweaver) share, so that each adapter is only the
// format: what its tables mean.
//
// Everything here serves one promise: browsing a store never writes a byte
// to it and never changes it in any way its owner could notice. The
// measurements behind these choices are in docs/tailing.md.
//
//   - Preflight judges a path from the file system and the 100-byte header
//     before SQLite sees it. Opening a WAL database nobody else has open
//     creates -wal and -shm files beside it; a file vigil refuses (empty,
//     not SQLite, truncated, newer) is left exactly as it was found.
//   - DSN builds file: URIs with net/url, so a path with '#', '?' or '%'
//     cannot cut the query short (a lost "mode=ro" would create a file).
//   - OpenRead opens the browsing connection mode=ro, pinned to one
//     connection (PRAGMA data_version, which the watcher's probe reads, is
//     per connection). In a read-only directory with no WAL it falls back
//     to immutable=1 and says so: such a handle sees no later commits, and
//     the source disables deciding.
//   - OpenWrite is the writing connection, opened only for a decision (or
//     by a harness writing runs): _txlock=immediate makes every
//     transaction BEGIN IMMEDIATE, because a deferred transaction that
//     reads and then writes fails at once with SQLITE_BUSY when another
//     process writes, whatever the busy timeout. No connection here ever
//     sets journal_mode or runs a migration.
//   - Stmts caches prepared reads, and EachRow closes each result set
//     before returning, so no read transaction outlives a call (a held
//     read transaction pins the WAL and stops checkpoints).
//   - MapErr turns driver errors into *store.Error values of store's
//     sentinel kinds, so callers never see the driver's types.
//   - Tops and IDList are the row-id tailer's pieces: both formats append
//     rows with increasing ids, so "what is new" is "id > mark", and one
//     probe of every table's top id tells a refresh which tables to read.
//
// The package is internal: formats outside this module have their own
// mechanics, and nothing outside the SQLite adapters links the driver (the
// views, the TUI and the Leviath adapter do not).
package sqlitex
