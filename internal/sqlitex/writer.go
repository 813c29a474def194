package sqlitex

import (
	"database/sql"
	"sync"
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
func (w *Writer) Get(abs string) (*sql.DB, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db != nil {
		return w.db, nil
	}
	db, err := OpenWrite(abs)
	if err != nil {
		return nil, MapErr(abs, err)
	}
	w.db = db
	return db, nil
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
