package sqlitex

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	_ "modernc.org/sqlite" // the "sqlite" driver

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

// Open opens a pinned connection on abs with the 5 s busy timeout every
// source uses, and pings it so a bad file fails here; query sets the mode.
// Errors are the driver's, for the caller to name (MapErr).
func Open(abs, query string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", DSN(abs, query+"&_pragma=busy_timeout(5000)"))
	if err != nil {
		return nil, err
	}
	Pin(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// OpenRead opens the read connection of a browsing source: mode=ro can
// never write, checkpoint or delete the WAL, and fails instead of creating
// a file at a wrong path. In a read-only directory with no WAL (no room for
// -shm, and no writer) it reads the file as immutable; that is reported,
// since such a handle sees no later commits.
func OpenRead(abs string) (db *sql.DB, immutable bool, err error) {
	db, err = Open(abs, "mode=ro")
	if err != nil && IsReadOnly(err) && !Exists(abs+"-wal") {
		db, err = Open(abs, "mode=ro&immutable=1")
		immutable = err == nil
	}
	return db, immutable, err
}

// OpenWrite opens a writing connection whose transactions are BEGIN
// IMMEDIATE: a deferred transaction that reads and then writes fails at
// once with SQLITE_BUSY when another process writes, whatever the timeout.
// It leaves the journal mode as the file has it.
func OpenWrite(abs string) (*sql.DB, error) {
	return Open(abs, "_txlock=immediate")
}

// DataVersion is PRAGMA data_version on a pinned connection: it changes
// whenever another connection commits, which is what a watcher's safety
// poll needs to notice commits (in-place updates too) cheaply.
func DataVersion(db *sql.DB) (uint64, error) {
	var v uint64
	err := db.QueryRow("PRAGMA data_version").Scan(&v)
	return v, err
}

// WatchSpec is what to watch for a SQLite store: the file, its WAL and
// rollback journal, and a PRAGMA data_version probe.
func WatchSpec(path string, version func() (uint64, error)) store.WatchSpec {
	base := filepath.Base(path)
	return store.WatchSpec{Path: path, Names: []string{base, base + "-wal", base + "-journal"}, Version: version}
}

// Writable works out, without writing, whether decisions can be written to
// a store file, and if not, why in one line.
func Writable(path string, readOnly, immutable bool) (ok bool, why string) {
	switch {
	case readOnly:
		return false, "opened read-only"
	case immutable:
		return false, "the store's directory is not writable"
	case syscall.Access(path, 2 /* W_OK */) != nil:
		return false, "the store file is read-only"
	case syscall.Access(filepath.Dir(path), 2) != nil && !Exists(path+"-wal"):
		return false, "the store's directory is not writable"
	}
	return true, ""
}

// Exists reports whether a file is there.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
