package sqlitex

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vigil-run/vigil/store"
)

// Preflight answers the cheap questions about a path before a browsing
// connection opens it: missing, a directory, empty, unreadable, not SQLite,
// truncated. A file a source refuses is left exactly as it was found.
//
// The two refusals that depend on what the format expected are worded by
// the adapter; empty fields say the sentinels' own words.
type Preflight struct {
	IsDir string // why a directory is not this format's store
	Empty string // why an empty file is not
}

// Check runs the preflight and returns the absolute path and the file's
// first 100 bytes (the SQLite header, for UserVersion), read through SQLite
// (ReadHeader): it never opens the file itself.
func (p Preflight) Check(path string) (abs string, head []byte, err error) {
	seen, err := p.check(path, false)
	if err != nil {
		return "", nil, err
	}
	return seen.Abs, seen.Head, nil
}

// Look is Check that also reads, on the same connection, the names of the
// tables the file's own pages hold: a format's detection answers from them
// without a connection of its own, and the format that opens the file
// takes the header from it (Seen.Fits) instead of reading it again.
func (p Preflight) Look(path string) (*Seen, error) { return p.check(path, true) }

func (p Preflight) check(path string, tables bool) (*Seen, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, store.Errorf(path, store.ErrNotFound, err, "%v", err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, store.Errorf(abs, store.ErrNotFound, err, "")
	case errors.Is(err, os.ErrPermission):
		return nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, "permission denied"))
	case err != nil:
		return nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, err.Error()))
	case fi.IsDir():
		return nil, store.Errorf(abs, store.ErrIsDirectory, nil, "%s", p.IsDir)
	case fi.Size() == 0:
		return nil, store.Errorf(abs, store.ErrNotAStore, nil, "%s", or(p.Empty, store.Because(store.ErrNotAStore, "the file is empty")))
	}
	at := statFiles(abs)
	head, names, size, steady, err := steadyHeader(abs, tables)
	if err != nil {
		if syscall.Access(abs, 4 /* R_OK */) != nil {
			return nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, "permission denied"))
		}
		if !steady {
			return nil, unsteadyErr(abs)
		}
		return nil, MapErr(abs, err)
	}
	if int64(len(head)) > size {
		head = head[:size]
	}
	if kind, detail := HeaderProblem(head, size); kind != nil {
		if !steady && kind == store.ErrCorrupt {
			return nil, unsteadyErr(abs)
		}
		e := store.Errorf(abs, kind, nil, "")
		if detail != "" {
			e.Detail = store.Because(kind, detail)
		}
		return nil, e
	}
	return &Seen{Abs: abs, Head: head, Tables: names, at: at}, nil
}

// ReadHeader returns the first 100 bytes of the database file at abs as the
// file holds them (not as its WAL would amend them), shorter only if SQLite
// could not say. Errors are the driver's, for the caller to name (MapErr):
// a file that is not SQLite is SQLITE_NOTADB.
//
// It reads through SQLite and never opens the file itself. On POSIX a
// close() of any descriptor of a file drops every fcntl lock the process
// holds on it — among them the SHARED lock each WAL connection keeps — and a
// process that writes a store through Create or OpenWriter and then browses
// it with Open holds such locks. SQLite's unix VFS keeps one record per
// inode for the whole process and never closes a descriptor while a
// connection in the process holds a lock on that inode, so a read through
// it is the one read that cannot do that. The connection is immutable=1 and
// read-only: it takes no lock, and creates no -wal or -shm, so a refused
// file gets no companions; writable_schema lets it read page 1 of a
// truncated file (SQLite otherwise refuses the file before any page is read,
// and the preflight could not say by how much it is short).
func ReadHeader(abs string) ([]byte, error) {
	head, _, err := readHeader(abs, false)
	return head, err
}

// readHeader is ReadHeader, and with tables the names of the tables in the
// schema the file's own pages hold (nil when they cannot be read: a file
// too damaged for its schema is judged by the header alone).
func readHeader(abs string, tables bool) ([]byte, map[string]bool, error) {
	db, err := sql.Open("sqlite", DSN(abs, "mode=ro&immutable=1&_pragma=writable_schema(1)"))
	if err != nil {
		return nil, nil, err
	}
	defer heldWhile(abs, func() { db.Close() })()
	Pin(db)
	var page []byte
	if err := db.QueryRow("SELECT data FROM sqlite_dbpage WHERE pgno = 1").Scan(&page); err != nil {
		return nil, nil, err
	}
	if len(page) > 100 {
		page = page[:100]
	}
	if !tables {
		return page, nil, nil
	}
	return page, tableNames(db), nil
}

func tableNames(db *sql.DB) map[string]bool {
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil
	}
	defer rows.Close()
	names := map[string]bool{}
	for rows.Next() {
		var n string
		if rows.Scan(&n) != nil {
			return nil
		}
		names[n] = true
	}
	if rows.Err() != nil {
		return nil
	}
	return names
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

var magic = []byte("SQLite format 3\x00")

// HeaderProblem judges a file by its first 100 bytes and its size. It
// returns the sentinel kind and a detail, or nil.
func HeaderProblem(h []byte, size int64) (kind error, detail string) {
	if len(h) < len(magic) || string(h[:len(magic)]) != string(magic) {
		return store.ErrNotSQLite, ""
	}
	if len(h) < 100 {
		return store.ErrCorrupt, "shorter than a SQLite header"
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return store.ErrCorrupt, "bad page size in the header"
	}
	// The in-header page count is valid when its version-valid-for number
	// matches the change counter (SQLite 3.7.0 and later always write it).
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if binary.BigEndian.Uint32(h[92:96]) == binary.BigEndian.Uint32(h[24:28]) && pages > 0 && size < pages*pageSize {
		return store.ErrCorrupt, fmt.Sprintf("truncated: %d of %d bytes", size, pages*pageSize)
	}
	return nil, ""
}

// WALHeader reports whether a header says the file is in WAL mode (its
// read and write versions are 2): opening it then needs -wal and -shm.
func WALHeader(h []byte) bool {
	return len(h) >= 20 && (h[18] == 2 || h[19] == 2)
}

// UserVersion is PRAGMA user_version as the header stores it.
func UserVersion(h []byte) int64 {
	if len(h) < 64 {
		return 0
	}
	return int64(int32(binary.BigEndian.Uint32(h[60:64])))
}
