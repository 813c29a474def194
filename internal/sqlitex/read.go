package sqlitex

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	sqlite "modernc.org/sqlite"

	"github.com/vigil-run/vigil/store"
)

// How a browsing connection reads a database file. SQLite has no mode that
// reads a WAL database without -wal and -shm beside it other than
// immutable=1, and a plain mode=ro connection creates both when they are
// missing and, when it is the first to open the database, rewrites -shm
// from the WAL: so which mode is right depends on what sits beside the file,
// and changes when that does.
//
//   - shared: mode=ro&readonly_shm=1. Used when -wal and -shm exist (a
//     writer has the database open, or left them), and for a rollback-journal
//     database (which needs neither). readonly_shm opens -shm read-only: with
//     a writer it shares the writer's wal-index; with none, SQLite builds one
//     in memory from the WAL (reading everything committed) instead of
//     rewriting the file. It never creates -shm.
//   - snapshot: mode=ro&immutable=1. Used when the header says WAL and no
//     -wal exists (nobody has the database open, and opening it the usual way
//     would create -wal and -shm), when a -wal has no -shm beside it, and when
//     the shared mode cannot open the file (a read-only mount, a hot journal a
//     reader cannot roll back). It takes no locks and creates nothing, and
//     sees no later change by itself: so a snapshot connection is dropped as
//     soon as the file changes or a -wal or -shm appears, and the next read
//     opens again in whichever mode fits then.
//
// Dropping and reopening happens inside database/sql: each connection
// checks, by stat alone, whether the files still look as they did when it
// opened (driver.SessionResetter before each use, driver.Validator after),
// and a connection that is out of date says so and is replaced. The same
// check catches a file rewritten in place under any connection (cp over the
// store, a truncate and a restore), whose page cache would otherwise keep
// showing what was there before.
type readMode int

const (
	readShared readMode = iota
	readSnapshot
)

// files is what stat says about a database file and the files beside it.
type files struct {
	exists   bool
	dev, ino uint64
	size     int64
	mtime    int64 // ns
	ctime    int64 // ns: changes on any write, also one that restores the mtime
	wal, shm bool
	walSize  int64
	walMtime int64
}

func statFiles(abs string) files {
	var f files
	var st syscall.Stat_t
	if syscall.Stat(abs, &st) != nil {
		return f
	}
	f.exists = true
	f.dev, f.ino, f.size = uint64(st.Dev), uint64(st.Ino), st.Size
	f.mtime = st.Mtim.Sec*1e9 + st.Mtim.Nsec
	f.ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	if syscall.Stat(abs+"-wal", &st) == nil {
		f.wal, f.walSize, f.walMtime = true, st.Size, st.Mtim.Sec*1e9+st.Mtim.Nsec
	}
	f.shm = Exists(abs + "-shm")
	return f
}

func (f files) sameFile(g files) bool {
	return f.exists && g.exists && f.dev == g.dev && f.ino == g.ino
}

// changed reports whether g (later) differs from f in anything a
// connection opened at f in mode depends on. A snapshot sees nothing of the
// WAL, so any write to it counts; a shared connection follows the WAL
// itself.
func (f files) changed(g files, mode readMode) bool {
	if f.size != g.size || f.mtime != g.mtime || f.ctime != g.ctime || f.wal != g.wal || f.shm != g.shm {
		return true
	}
	return mode == readSnapshot && (f.walSize != g.walSize || f.walMtime != g.walMtime)
}

// Reading is a browsing connection's account of how it reads the file.
type Reading struct{ r *reader }

// Note says, in one line, what the current way of reading leaves out (""
// when nothing): the commits of a WAL that has no -shm beside it, or a
// rollback journal a reader cannot roll back.
func (rd *Reading) Note() string {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	return rd.r.note
}

// Short is Note in a few words, for a status bar ("" when nothing).
func (rd *Reading) Short() string {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	switch note := rd.r.note; {
	case note == "":
		return ""
	case strings.Contains(note, noShmNote):
		return "the WAL's commits are not shown (it has no -shm)"
	case strings.Contains(note, journalNote):
		return "an unfinished transaction is not shown"
	}
	return "shown as the main file holds it"
}

// The notes' distinctive words, which Short tells them apart by.
const (
	noShmNote   = "-wal has no -shm beside it"
	journalNote = "-journal sits beside it"
)

// reader is the driver.Connector behind a browsing *sql.DB.
type reader struct {
	abs  string
	base driver.Connector // modernc's, for Driver
	db   *sql.DB          // the handle it serves, to close idle connections when told to
	seq  atomic.Uint64    // connections opened

	mu     sync.Mutex
	pinned files // the file the first connection opened: later ones open only that one
	head   files // the file state walHdr was read at
	walHdr bool
	note   string
}

// OpenRead opens the browsing connection on abs: read-only, pinned to one
// connection (PRAGMA data_version is per connection), never writing,
// checkpointing or creating a byte beside the file (see readMode). It
// pings, so a bad file fails here. Errors are the driver's or a
// *store.Error, for the caller to name (MapErr).
//
// head, when not nil, is the file's header as Preflight just read it, so
// the first connection need not read it again.
func OpenRead(abs string, head []byte) (*sql.DB, *Reading, error) {
	base, err := sqlite.NewConnector(DSN(abs, "mode=ro"))
	if err != nil {
		return nil, nil, err
	}
	r := &reader{abs: abs, base: base}
	if head != nil {
		r.head, r.walHdr = statFiles(abs), WALHeader(head)
	}
	db := sql.OpenDB(r)
	r.db = db
	Pin(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, &Reading{r}, nil
}

func (r *reader) Driver() driver.Driver { return r.base.Driver() }

// Connect opens one connection in the mode the files call for now.
func (r *reader) Connect(ctx context.Context) (driver.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := statFiles(r.abs)
	switch {
	case !f.exists:
		return nil, store.Errorf(r.abs, store.ErrNotFound, nil, "")
	case r.pinned.exists && !r.pinned.sameFile(f):
		// The path now names another file: reading it through this handle
		// would fold its rows into the old one's. The watcher says Replaced
		// and the caller opens the path again.
		return nil, store.Errorf(r.abs, store.ErrIO, nil, "%s", store.Because(store.ErrIO, "replaced by another file since it was opened; open it again"))
	}
	mode, note, err := r.choose(f)
	if err != nil {
		return nil, err
	}
	roShm, done := false, func() {}
	if mode == readShared {
		roShm, done = readerOpening(keyOf(f), r.abs+"-shm", r)
		if roShm && (f.wal || r.walHdr) && !walHasFrames(r.abs+"-wal", f.walSize) {
			// Nobody has the store open and its WAL holds no frame (no
			// valid header, or a header alone: a writer killed as it
			// began), so the main file is the whole store. A reader that
			// may not rebuild -shm would retry on such a WAL until it gave
			// up (SQLITE_PROTOCOL, after ten seconds; C SQLite does too).
			// A rollback-journal store has no WAL to judge and is read
			// shared, under its locks: a lock-free read of one while it is
			// written reads pages torn mid-commit ("malformed").
			mode, roShm = readSnapshot, false
			done()
			done = func() {}
		}
	}
	c, err := r.open(ctx, mode, roShm)
	if err != nil && mode == readShared && (IsReadOnly(err) || isCantOpen(err) || isProtocol(err)) {
		// A read-only mount, a -shm this user cannot read, a hot journal a
		// reader may not roll back: the file as it stands is what can be read.
		mode, note = readSnapshot, r.snapshotNote(err)
		done()
		done = func() {}
		c, err = r.open(ctx, mode, false)
	}
	if err != nil {
		done()
		return nil, err
	}
	if !r.pinned.exists {
		r.pinned = f
	}
	r.note = note
	return &conn{Conn: c, done: heldWhile(r.abs, done), r: r, mode: mode, at: f, seq: r.seq.Add(1)}, nil
}

// dropIdle closes the connection waiting in the pool, if any (the one in
// use, if any, is closed when it is put back).
func (r *reader) dropIdle() {
	if r.db != nil {
		r.db.SetMaxIdleConns(0)
		r.db.SetMaxIdleConns(1)
	}
}

// choose picks the mode for the files as they are (see readMode).
func (r *reader) choose(f files) (readMode, string, error) {
	base := filepath.Base(r.abs)
	switch {
	case f.wal && f.shm:
		return readShared, "", nil
	case f.wal:
		return readSnapshot, base + noShmNote + ", and a reader does not create one: shown as the main file holds it (commits only in the WAL are not shown until a writer opens the store)", nil
	}
	if !r.head.exists || !r.head.sameFile(f) || r.head.changed(f, readShared) {
		h, _, _, steady, err := steadyHeader(r.abs, false)
		if err != nil {
			if !steady {
				return 0, "", unsteadyErr(r.abs)
			}
			return 0, "", err
		}
		r.head, r.walHdr = f, WALHeader(h)
	}
	if r.walHdr {
		return readSnapshot, "", nil
	}
	return readShared, "", nil
}

func (r *reader) snapshotNote(err error) string {
	base := filepath.Base(r.abs)
	if Exists(r.abs + "-journal") {
		return base + journalNote + " (a writer stopped mid-transaction?) and a reader cannot roll it back: shown as the main file holds it"
	}
	kind, detail, _ := ErrKind(r.abs, err)
	why := kind.Error()
	if detail != "" {
		why = detail
	}
	return "cannot open it the usual way (" + why + "): shown as the main file holds it"
}

// open makes one driver connection in mode and reads the schema cookie, so
// that a file SQLite cannot open in this mode fails here. roShm says the
// shared mode may open -shm read-only (see held.go).
func (r *reader) open(ctx context.Context, mode readMode, roShm bool) (driver.Conn, error) {
	q := "mode=ro&_pragma=busy_timeout(5000)"
	switch {
	case mode == readSnapshot:
		q = "mode=ro&immutable=1"
	case roShm:
		q = "mode=ro&readonly_shm=1&_pragma=busy_timeout(5000)"
	}
	cn, err := sqlite.NewConnector(DSN(r.abs, q))
	if err != nil {
		return nil, err
	}
	c, err := cn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.(driver.ExecerContext).ExecContext(ctx, "PRAGMA schema_version", nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

const walHeaderSize = 32

// walHasFrames reports whether the WAL file at p (size bytes) starts with a
// header SQLite accepts (magic, version, checksum) and is long enough to
// hold a frame after it. It reads the file directly: SQLite never holds an
// fcntl lock on a -wal (its WAL locks live in -shm), so closing a
// descriptor of it drops none.
func walHasFrames(p string, size int64) bool {
	if size < walHeaderSize {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [walHeaderSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	magic := binary.BigEndian.Uint32(h[0:4])
	if magic&^1 != 0x377f0682 || binary.BigEndian.Uint32(h[4:8]) != 3007000 {
		return false
	}
	// The checksum of the first 24 bytes, in the byte order the magic says.
	var order binary.ByteOrder = binary.LittleEndian
	if magic&1 == 1 {
		order = binary.BigEndian
	}
	var s1, s2 uint32
	for i := 0; i < 24; i += 8 {
		s1 += order.Uint32(h[i:]) + s2
		s2 += order.Uint32(h[i+4:]) + s1
	}
	if s1 != binary.BigEndian.Uint32(h[24:28]) || s2 != binary.BigEndian.Uint32(h[28:32]) {
		return false
	}
	const frameHeader = 24
	return size >= walHeaderSize+frameHeader+int64(binary.BigEndian.Uint32(h[8:12]))
}

func isProtocol(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 15
}

func isCantOpen(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 14
}

// conn is one connection sqlitex opened: modernc's, plus what it needs to
// unregister (held.go) and, for a browsing connection, the files it was
// opened at, so database/sql replaces it once they change.
type conn struct {
	driver.Conn
	done func() // unregisters it

	r    *reader // nil for a read-write connection
	mode readMode
	at   files
	seq  uint64
}

// stale: a browsing connection that a read-write connection of this
// process asked to go, or whose file is still at the path and has changed
// since it opened. A file deleted or replaced keeps its connection (it
// reads what it has open; the watcher says Gone or Replaced).
func (c *conn) stale() bool {
	if c.r == nil {
		return false
	}
	if c.seq < evictedBelow(keyOf(c.at), c.r) {
		return true
	}
	f := statFiles(c.r.abs)
	return c.at.sameFile(f) && c.at.changed(f, c.mode)
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.done()
	return err
}

// Unwrap is modernc's connection (its Limit and FileControl look through).
func (c *conn) Unwrap() driver.Conn { return c.Conn }

func (c *conn) ResetSession(ctx context.Context) error {
	if c.stale() {
		return driver.ErrBadConn
	}
	if rs, ok := c.Conn.(driver.SessionResetter); ok {
		return rs.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if c.stale() {
		return false
	}
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c *conn) Ping(ctx context.Context) error {
	return c.Conn.(driver.Pinger).Ping(ctx)
}

var (
	_ driver.Connector          = (*reader)(nil)
	_ driver.Connector          = (*writeConnector)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
)

// Exists reports whether a file is there.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
