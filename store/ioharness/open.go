package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync/atomic"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// FormatVersion is io-harness's CHECKPOINT_FORMAT, stored as PRAGMA
// user_version. A store stamped above it was written by a newer io-harness.
const FormatVersion = schema.FormatVersion

// Store is an io-harness run store opened for browsing. It reads through a
// read-only connection that never writes a byte to the database file;
// decisions (the only writes a viewer makes) go through a second connection
// opened when the first decision is made. Writing runs is the harness
// package's (store/ioharness/harness).
type Store struct {
	path     string
	readOnly bool             // no decisions at all
	roReason string           // why deciding is disabled, one line
	reading  *sqlitex.Reading // how the browsing connection reads the file

	read  *sql.DB        // reads (pinned single connection)
	write sqlitex.Writer // decisions; opened lazily

	schema atomic.Pointer[schemaInfo] // refreshed when the store's schema changes (schema.go)

	stmts sqlitex.Stmts // prepared reads on the read connection
	rows  rowBounds     // where each run's rows lie, for exact per-run reads (rows.go)
	zones stepZones     // where a long run's steps lie in its side tables (stepzones.go)
}

// Open opens an existing store for browsing and deciding. It never changes
// the store's journal mode, runs no migration, and writes nothing until a
// decision is made.
func Open(path string, opts ...store.Options) (*Store, error) {
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	abs, head, err := checkStoreFileSeen(path, o.Seen)
	if err != nil {
		return nil, err
	}
	s := &Store{path: abs, readOnly: o.ReadOnly}
	if err := s.openRead(head); err != nil {
		return nil, err
	}
	s.decideWritable()
	return s, nil
}

// OpenReadOnly opens a store for browsing only: no decision can be made
// through it.
func OpenReadOnly(path string) (*Store, error) { return Open(path, store.Options{ReadOnly: true}) }

// checkStoreFile answers the cheap questions before SQLite sees the path:
// missing, a directory, empty, not SQLite, or stamped by a newer io-harness.
// It returns the header too.
func checkStoreFile(path string) (string, []byte, error) {
	abs, head, err := sqlitex.Preflight{}.Check(path)
	if err != nil {
		return "", nil, err
	}
	if v := sqlitex.UserVersion(head); v > FormatVersion {
		return "", nil, storeErr(abs, store.ErrNewerFormat, schema.NewerDetail(v), nil)
	}
	return abs, head, nil
}

// checkStoreFileSeen is checkStoreFile answered from what another format's
// detection just read of the file (store.Options.Seen: the registry tries
// Starweaver first), while that still fits the file.
func checkStoreFileSeen(path string, seen any) (string, []byte, error) {
	s, ok := seen.(*sqlitex.Seen)
	if !ok {
		return checkStoreFile(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil || !s.Fits(abs) {
		return checkStoreFile(path)
	}
	if v := sqlitex.UserVersion(s.Head); v > FormatVersion {
		return "", nil, storeErr(abs, store.ErrNewerFormat, schema.NewerDetail(v), nil)
	}
	return abs, s.Head, nil
}

// openRead opens the read connection: read-only, it can never write,
// checkpoint or delete the WAL, creates nothing beside the file, and fails
// instead of creating a file at a wrong path (sqlitex.OpenRead).
func (s *Store) openRead(head []byte) error {
	db, reading, err := sqlitex.OpenRead(s.path, head)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	s.read, s.reading = db, reading
	if err := s.check(context.Background()); err != nil {
		db.Close()
		s.read = nil
		return err
	}
	return nil
}

// check refuses a newer format or a file without the io-harness tables,
// and learns which tables and columns this store has (schema.Check).
func (s *Store) check(ctx context.Context) error {
	si, err := schema.Check(ctx, s.read, s.path)
	if err != nil {
		return err
	}
	s.setSchema(&schemaInfo{si})
	return nil
}

// decideWritable works out, without writing, whether decisions can be made.
func (s *Store) decideWritable() {
	ok, why := sqlitex.Writable(s.path, s.readOnly)
	s.readOnly, s.roReason = !ok, why
}

// writer returns the connection decisions go through, opening it on first
// use.
func (s *Store) writer() (*sql.DB, error) {
	if s.readOnly {
		return nil, storeErr(s.path, store.ErrReadOnly, s.roReason, nil)
	}
	return s.write.Get(s.path)
}

// ReadingNote is what the browsing connection reads the store without, in
// a few words for a status bar ("" when nothing; Problems has the line).
func (s *Store) ReadingNote() string {
	if s.reading == nil {
		return ""
	}
	return s.reading.Short()
}

// Problems says what the browsing connection reads without, if anything: a
// WAL with no -shm beside it, or a rollback journal a reader cannot roll
// back (store.ProblemReporter).
func (s *Store) Problems() []error {
	if s.reading == nil {
		return nil
	}
	if n := s.reading.Note(); n != "" {
		return []error{&store.Error{Path: s.path, Kind: store.ErrIO, Detail: n}}
	}
	return nil
}

// Path is the store's absolute file path.
func (s *Store) Path() string { return s.path }

// ReadOnly reports whether decisions are disabled, and why.
func (s *Store) ReadOnly() (bool, string) { return s.readOnly, s.roReason }

// prepared returns a cached prepared statement on the read connection.
func (s *Store) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	return s.stmts.Prepare(ctx, s.read, q)
}

// Close releases both connections.
func (s *Store) Close() error {
	s.stmts.Close()
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	// The writing connection closes last: when nobody else has the store
	// open it is then SQLite's last connection, which checkpoints the WAL
	// into the file and removes -wal and -shm. Closed first, it left a
	// decision in a -wal beside a store that had none, with the browsing
	// connection (which may not checkpoint) the last to go.
	errs = append(errs, s.write.Close(s.read))
	return errors.Join(errs...)
}

// DataVersion is SQLite's PRAGMA data_version on the pinned read connection:
// it changes whenever another connection commits. The watcher's safety poll
// uses it to notice commits (including in-place updates) cheaply.
func (s *Store) DataVersion() (uint64, error) { return sqlitex.DataVersion(s.read) }
