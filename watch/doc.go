// Package watch turns file-system events into "the source changed" signals.
//
// It knows nothing about tables or journal formats. A consumer (the SQLite
// store layer, later a Leviath journal adapter) receives a [Signal] from
// [Watcher.C], re-reads whatever it tails, and calls [Watcher.Ack] to say
// whether it found anything new. The measurements behind every choice below
// are in docs/tailing.md.
//
// # Why the directory is watched, not the file
//
// In WAL mode a commit writes only the -wal file; the database file changes
// only when a checkpoint runs, hundreds of commits later. A watch on the -wal
// file cannot be added before the file exists, and it dies when the last
// connection closes (SQLite deletes the file) or the journal mode changes. A
// watch on the database file dies when the file is atomically replaced. One
// watch on the directory sees all of it: commits (-wal writes), checkpoints,
// -wal creation and deletion, rollback-journal commits (-journal), and an
// atomic replace (a Create of the database name). Events are filtered by base
// name ({db, db-wal, db-journal} by default): -shm changes go through mmap and
// say nothing useful, other files in the directory are noise, and an event
// that is exactly Chmod comes from SQLite's fchown when running as root. Every
// kept event means only "something may have changed": one commit fires
// several events and ten commits can fire one.
//
// For journal formats ([Options.Path] is a directory) the directory and its
// immediate subdirectories (one per run) are watched, or its subdirectories
// to [Options.Depth] levels (a journal nested by date), and new
// subdirectories are added as they appear.
//
// # Why coalescing works by not reading
//
// The first event after an idle period is delivered at once: a lone commit
// reaches the consumer in well under a millisecond. After that, at most one
// Changed signal is outstanding. While the consumer is busy (signal sent, no
// Ack yet) and for [Options.Coalesce] after each delivery, the watcher does
// not read the fsnotify channel at all. fsnotify's reader then blocks, events
// queue in the kernel, and the kernel merges identical queued events; a
// 2 000-commits/s writer produced ~800 events for 10 000 commits this way,
// against 10 000+ with timer-based debouncing that keeps reading. When the
// window ends the channel is drained and one signal covers everything that
// queued up. This halves the reader's CPU and, because the kernel queues an
// inotify event inside each of the writer's write() calls, it also keeps the
// writer's commit latency at its no-reader baseline.
//
// # Why there is a re-check
//
// A WAL commit write()s its frames (which fires the event) before it publishes
// the commit in the mmap'd -shm index (which fires nothing); with
// synchronous=FULL an fsync sits in between. A refresh triggered by the event
// can therefore find nothing new, and no further event comes until the next
// commit, which for an agent can be minutes away. So an Ack arms a re-check
// with back-off: 2, 3, 4.5 … 256 ms, then it stops. Ack(false) after a re-check
// lengthens the delay by half; any other Ack starts the chain again at 2 ms; a new
// event cancels the back-off and triggers at once.
//
// Ack(true) arms it too: the kernel can merge the events of commits N and N+1
// into one, the refresh finds N while N+1 is still in its fsync, and nothing
// else would ever announce N+1.
//
// What a re-check does depends on [Options.Version]. With a Version (the
// SQLite layer passes PRAGMA data_version, which moves only once a commit is
// visible), the watcher calls it and compares it with its value from just
// before the last Changed was sent; only a difference reaches the consumer.
// A re-check then costs one ~10 µs probe instead of a refresh, so the chain
// after every refresh is nearly free. Without a Version, each re-check is a
// Changed signal and the consumer refreshes. Re-checks respect the
// coalescing window like events do, so the refresh rate stays bounded by
// 1/Coalesce whatever happens.
//
// With a Version and a file Path, events pass the same gate: when only writes
// are pending and Version is still its value from before the last Changed,
// the writes are held back (nothing became visible since that refresh read)
// and a re-check from RecheckMin/4 watches Version instead; for Coalesce
// after a hold no event is read, so the burst merges in the kernel. A
// commit's frames are written before it shows and a checkpoint shows
// nothing: a writer committing a thousand rows a transaction fired a dozen
// empty refreshes a commit without this.
//
// On top of that a slow safety tick ([Options.SafetyPoll], 1 s) calls Version
// and checks the file's identity. No commit waits for the next one.
//
// In polling mode with a Version there is nothing to re-check: whatever
// becomes visible after a refresh changes Version by the next poll. Polling
// the stat-based default probe (which moves when frames are written, before
// they are visible) keeps the re-checks.
//
// # Fallback, deletion, replacement
//
// When notifications cannot be used (watch or instance limits, unsupported
// file systems, a fatal error on fsnotify's error channel) or are not wanted
// ([Options.Poll], [Options.DisableNotify]), the watcher polls Version at an
// interval and says so first with a ModeChanged signal; it never degrades
// silently. A deleted, moved or atomically replaced file produces Gone or
// Replaced (compared by inode on Create/Remove/Rename events of the name and
// on every tick); a removed directory produces Gone and the watch is re-added
// when it comes back.
//
// The watcher never holds the watched data open: it only stats files and calls
// Version. (On kqueue systems fsnotify itself opens the files of a watched
// directory; keep the database in a directory of its own there.)
package watch
