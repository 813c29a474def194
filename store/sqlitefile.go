package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	sqlite "modernc.org/sqlite"
)

// The mechanics every SQLite-based source shares (io-harness here, the
// Starweaver adapter beside it): how a file is checked before SQLite sees
// it, how the read connection is opened without ever writing, and how
// connections are named and pinned.

// SQLiteDSN builds a file: URI with url.URL, so '#', '?' and '%' in a path
// cannot cut the query off (a cut-off "mode=ro" would create an empty file).
func SQLiteDSN(abs, query string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: query}
	return u.String()
}

// PinConn keeps exactly one connection: PRAGMA data_version is per
// connection, and an in-memory database lives only as long as its
// connection.
func PinConn(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

var sqliteMagic = []byte("SQLite format 3\x00")

// SQLiteHeaderProblem judges a file by its first 100 bytes and its size,
// before SQLite opens it: a reader opening a WAL database nobody else has
// open creates -wal and -shm beside it, and a file we refuse should be left
// as we found it. It returns the sentinel kind and a detail, or nil.
func SQLiteHeaderProblem(h []byte, size int64) (kind error, detail string) {
	if len(h) < len(sqliteMagic) || string(h[:len(sqliteMagic)]) != string(sqliteMagic) {
		return ErrNotSQLite, ""
	}
	if len(h) < 100 {
		return ErrCorrupt, "shorter than a SQLite header"
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return ErrCorrupt, "bad page size in the header"
	}
	// The in-header page count is valid when its version-valid-for number
	// matches the change counter (SQLite 3.7.0 and later always write it).
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if binary.BigEndian.Uint32(h[92:96]) == binary.BigEndian.Uint32(h[24:28]) && pages > 0 && size < pages*pageSize {
		return ErrCorrupt, fmt.Sprintf("truncated: %d of %d bytes", size, pages*pageSize)
	}
	return nil, ""
}

// SQLiteUserVersion is PRAGMA user_version as the header stores it.
func SQLiteUserVersion(h []byte) int64 {
	if len(h) < 64 {
		return 0
	}
	return int64(int32(binary.BigEndian.Uint32(h[60:64])))
}

// OpenSQLite opens a pinned connection on abs with the 5 s busy timeout
// every source uses; query sets the mode. Errors are the driver's, for the
// caller to name.
func OpenSQLite(abs, query string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", SQLiteDSN(abs, query+"&_pragma=busy_timeout(5000)"))
	if err != nil {
		return nil, err
	}
	PinConn(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// OpenSQLiteRead opens the read connection of a browsing source: mode=ro
// can never write, checkpoint or delete the WAL, and fails instead of
// creating a file at a wrong path. In a read-only directory with no WAL
// (no room for -shm, and no writer) it reads the file as immutable; that
// is reported, since such a handle sees no later commits.
func OpenSQLiteRead(abs string) (db *sql.DB, immutable bool, err error) {
	db, err = OpenSQLite(abs, "mode=ro")
	if err != nil && IsSQLiteReadOnly(err) && !exists(abs+"-wal") {
		db, err = OpenSQLite(abs, "mode=ro&immutable=1")
		immutable = err == nil
	}
	return db, immutable, err
}

// OpenSQLiteWrite opens a writing connection whose transactions are BEGIN
// IMMEDIATE: a deferred transaction that reads and then writes fails at
// once with SQLITE_BUSY when another process writes, whatever the timeout.
func OpenSQLiteWrite(abs string) (*sql.DB, error) {
	return OpenSQLite(abs, "_txlock=immediate")
}

// SQLiteWatchSpec is what to watch for a SQLite store: the file, its WAL
// and rollback journal, and a PRAGMA data_version probe.
func SQLiteWatchSpec(path string, version func() (uint64, error)) WatchSpec {
	base := filepath.Base(path)
	return WatchSpec{Path: path, Names: []string{base, base + "-wal", base + "-journal"}, Version: version}
}

// SQLiteErrKind sorts a driver error into one of the sentinel kinds, with a
// one-line detail (possibly empty). ok is false for a nil error and for
// cancellation, which callers pass through unchanged.
func SQLiteErrKind(path string, err error) (kind error, detail string, ok bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, "", false
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return ErrIO, err.Error(), true
	}
	switch se.Code() & 0xff {
	case 26: // SQLITE_NOTADB
		return ErrNotSQLite, "", true
	case 11: // SQLITE_CORRUPT
		return ErrCorrupt, "", true
	case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
		return ErrLocked, "gave up after 5 s", true
	case 8: // SQLITE_READONLY
		return ErrReadOnly, "", true
	case 14: // SQLITE_CANTOPEN
		if !exists(path) {
			return ErrNotFound, "", true
		}
		return ErrIO, "cannot open", true
	}
	msg, _, _ := strings.Cut(se.Error(), "\n")
	return ErrIO, msg, true
}

// IsSQLiteReadOnly reports SQLITE_READONLY (and its extended codes, such as
// a read-only directory).
func IsSQLiteReadOnly(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 8
}

// SQLiteWritable works out, without writing, whether decisions can be
// written to a store file, and if not, why in one line.
func SQLiteWritable(path string, readOnly, immutable bool) (ok bool, why string) {
	switch {
	case readOnly:
		return false, "opened read-only"
	case immutable:
		return false, "the store's directory is not writable"
	case syscall.Access(path, 2 /* W_OK */) != nil:
		return false, "the store file is read-only"
	case syscall.Access(filepath.Dir(path), 2) != nil && !exists(path+"-wal"):
		return false, "the store's directory is not writable"
	}
	return true, ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
