package sqlitex

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"path/filepath"
	"syscall"

	sqlite "modernc.org/sqlite" // also the "sqlite" driver

	"github.com/vigil-run/vigil/store"
)

// DSN builds a file: URI with url.URL, so '#', '?' and '%' in a path cannot
// cut the query off (a cut-off "mode=ro" would create an empty file).
func DSN(abs, query string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: query}
	return u.String()
}

// Pin keeps exactly one connection: PRAGMA data_version is per connection,
// and an in-memory database lives only as long as its connection.
func Pin(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// OpenWrite opens a writing connection whose transactions are BEGIN
// IMMEDIATE: a deferred transaction that reads and then writes fails at
// once with SQLITE_BUSY when another process writes, whatever the timeout.
// It leaves the journal mode as the file has it, pins one connection with
// the 5 s busy timeout every source uses, and pings it. Errors are the
// driver's, for the caller to name (MapErr).
//
// Its connections register with this process's others on the file (see
// held.go), so that none of them can leave it a read-only -shm mapping.
func OpenWrite(abs string) (*sql.DB, error) {
	base, err := sqlite.NewConnector(DSN(abs, "_txlock=immediate&_pragma=busy_timeout(5000)"))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(&writeConnector{abs: abs, base: base})
	Pin(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

type writeConnector struct {
	abs  string
	base driver.Connector
}

func (w *writeConnector) Driver() driver.Driver { return w.base.Driver() }

func (w *writeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	done := func() {}
	if k, ok := inodeOf(w.abs); ok {
		done = writerOpening(k)
	}
	c, err := w.base.Connect(ctx)
	if err != nil {
		done()
		return nil, err
	}
	return &conn{Conn: c, done: heldWhile(w.abs, done)}, nil
}

// DataVersion is PRAGMA data_version on a pinned connection, plus that
// connection's own total_changes(): it changes whenever any connection
// commits, which is what a watcher needs to notice commits (in-place
// updates too) cheaply, and to hold back write events that show nothing
// new (watch.Options.Version). data_version alone misses the connection's
// own commits, and a writer's Store reads on its writing connection. A
// browsing connection replaced because the files changed (see OpenRead)
// starts its own count, so the number of the connection is folded in: a
// replacement always reads as a change.
func DataVersion(db *sql.DB) (uint64, error) {
	v, changes, err := CommitVersion(context.Background(), db)
	const low = 1<<32 - 1
	return v&^low | (v+changes)&low, err
}

// CommitVersion is DataVersion and the connection's own total_changes(),
// read in one statement: together they move on any commit, the
// connection's own included (a writer's Store reads on its writing
// connection).
func CommitVersion(ctx context.Context, db *sql.DB) (version, changes uint64, err error) {
	sc, err := db.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer sc.Close()
	var seq uint64
	sc.Raw(func(dc any) error {
		if c, ok := dc.(*conn); ok {
			seq = c.seq
		}
		return nil
	})
	var v uint64
	if err := sc.QueryRowContext(ctx, "SELECT data_version, total_changes() FROM pragma_data_version").Scan(&v, &changes); err != nil {
		return 0, 0, err
	}
	return seq<<32 | v&(1<<32-1), changes, nil
}

// WatchSpec is what to watch for a SQLite store: the file, its WAL and
// rollback journal, and a PRAGMA data_version probe.
func WatchSpec(path string, version func() (uint64, error)) store.WatchSpec {
	base := filepath.Base(path)
	return store.WatchSpec{Path: path, Names: []string{base, base + "-wal", base + "-journal"}, Version: version}
}

// Writable works out, without writing, whether decisions can be written to
// a store file, and if not, why in one line.
func Writable(path string, readOnly bool) (ok bool, why string) {
	switch {
	case readOnly:
		return false, "opened read-only"
	case errors.Is(syscall.Access(path, 2 /* W_OK */), syscall.EROFS):
		return false, "the store is on a read-only file system"
	case syscall.Access(path, 2) != nil:
		return false, "the store file is read-only"
	case syscall.Access(filepath.Dir(path), 2) != nil && !Exists(path+"-wal"):
		return false, "the store's directory is not writable"
	}
	return true, ""
}
