package sqlitex

import (
	"database/sql"
	"errors"
	"sync"

	"github.com/vigil-run/vigil/store"
)

// Writer is a source's writing connection, opened on first use: a browsing
// source opens none until the first decision, so a person who only looks
// never holds a handle that could write. The zero value is ready to use.
type Writer struct {
	mu sync.Mutex
	db *sql.DB
}

// Use makes db the writing connection (a harness's handle, which reads and
// writes through one connection).
func (w *Writer) Use(db *sql.DB) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.db = db
}

// Get returns the writing connection, opening it with OpenWrite if there is
// none yet. Errors are *store.Error (MapErr).
//
// Opening it where no -wal or -shm sits beside the store creates them; on
// a disk without room for them it refuses instead, so a decision that
// cannot be written leaves nothing behind.
func (w *Writer) Get(abs string) (*sql.DB, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db != nil {
		return w.db, nil
	}
	if (!Exists(abs+"-wal") || !Exists(abs+"-shm")) && DiskFull(abs) {
		return nil, DiskFullError(abs)
	}
	db, err := OpenWrite(abs)
	if err != nil {
		return nil, MapErr(abs, err)
	}
	w.db = db
	return db, nil
}

// Failed is told of a write's error: after one that ran out of room the
// writing connection is closed (unless it is also the read one), so that
// SQLite, if it is the last connection, removes the -wal and -shm it
// made. The next decision opens another.
func (w *Writer) Failed(read *sql.DB, err error) {
	var se *store.Error
	if err == nil || !errors.As(err, &se) || se.Detail != fullDetail(se.Path) {
		return
	}
	w.Close(read)
}

// Close closes the writing connection unless it is also the read one
// (which its owner closes).
func (w *Writer) Close(read *sql.DB) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.db != nil && w.db != read {
		err = w.db.Close()
	}
	w.db = nil
	return err
}

// Opened reports whether a writing connection is open: browsing must never
// open one.
func (w *Writer) Opened() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.db != nil
}
