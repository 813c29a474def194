// Package sqlitex is the SQLite mechanics vigil's two SQLite formats
// (io-harness and Starweaver) share, so that each adapter is only the
// format: what its tables mean.
//
// Everything here serves two promises: browsing a store never writes a
// byte to it and never changes it in any way its owner could notice; and
// nothing vigil does in a process can take away the locks that process's
// SQLite connections hold. The measurements behind these choices are in
// docs/tailing.md.
//
//   - No file descriptor of a database file is ever opened here except by
//     SQLite. On POSIX a close() of any descriptor of a file drops every
//     fcntl lock the process holds on it, among them the SHARED lock a WAL
//     connection keeps while open; another process closing its connection
//     then thinks it is the last, checkpoints and unlinks the WAL the
//     first process still writes into. SQLite's unix VFS keeps one record
//     per inode for the whole process and defers closing a descriptor
//     while any connection holds a lock on it, so every read of a database
//     file goes through SQLite — the header too (ReadHeader, on an
//     immutable connection that takes no lock and creates nothing). The one
//     file read directly is a -wal's header: SQLite locks only the database
//     file and -shm, never the WAL.
//   - Preflight judges a path from the file system and the 100-byte header
//     before a browsing connection opens it: a file vigil refuses (empty,
//     not SQLite, truncated, newer) is left exactly as it was found.
//   - OpenRead opens the browsing connection read-only, pinned to one
//     connection (PRAGMA data_version, which the watcher's probe reads, is
//     per connection), in the mode the files beside the store call for
//     (read.go): shared with readonly_shm when -wal and -shm exist, so a
//     wal-index nobody else holds is read, never rebuilt; immutable when
//     opening the usual way would create -wal and -shm (nobody has the
//     store open), when a -wal has no -shm, or on a read-only mount. Each
//     connection checks by stat, before every use, whether the files still
//     look as they did, and is replaced when they do not: a writer appearing,
//     a store rewritten in place. Problems-worthy limits (a WAL read without
//     its -shm) are in Reading.Note.
//   - OpenWrite is the writing connection, opened only for a decision (or
//     by a harness writing runs): _txlock=immediate makes every
//     transaction BEGIN IMMEDIATE, because a deferred transaction that
//     reads and then writes fails at once with SQLITE_BUSY when another
//     process writes, whatever the busy timeout. No connection here ever
//     sets journal_mode or runs a migration. Writer opens it lazily and
//     refuses on a disk without room for the -wal and -shm it would create.
//   - Every connection registers by inode with this process's others
//     (held.go): SQLite shares one -shm mapping between a process's
//     connections to a file, opened in the first one's way, so a browsing
//     connection uses readonly_shm only while no read-write one is open
//     here and no other process holds the file, and a read-write one has
//     the browsing ones let go first.
//   - DSN builds file: URIs with net/url, so a path with '#', '?' or '%'
//     cannot cut the query short (a lost "mode=ro" would create a file).
//   - Stmts caches prepared reads, and EachRow closes each result set
//     before returning, so no read transaction outlives a call (a held
//     read transaction pins the WAL and stops checkpoints).
//   - CopyField and FieldHead (blob.go) read one huge TEXT or BLOB value a
//     piece at a time with SQLite's incremental blob I/O, in short read
//     transactions, the connection let go between them: any SQL expression
//     over a value (substr too) has SQLite load it whole.
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
