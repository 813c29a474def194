package ioharness

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// FormatVersion is io-harness's CHECKPOINT_FORMAT, stored as PRAGMA
// user_version. A store stamped above it was written by a newer io-harness.
const FormatVersion = 7

//go:embed schema.sql
var schemaSQL string

type openMode int

const (
	modeBrowse openMode = iota // read connection; a writing one only for decisions
	modeWriter                 // one read-write connection (a harness writing runs)
)

// Store is an io-harness run store: the Go twin of io-harness's Store, over
// the same SQLite schema. A Store opened with Open reads through a
// read-only connection that never writes a byte to the database file;
// decisions (the only writes a viewer makes) go through a second connection
// opened when the first decision is made. A Store from Create, OpenWriter or
// Memory writes runs through the write API.
type Store struct {
	path     string
	mode     openMode
	readOnly bool             // no decisions at all
	roReason string           // why deciding is disabled, one line
	reading  *sqlitex.Reading // how the browsing connection reads the file (nil for a writer)

	read  *sql.DB        // reads (pinned single connection)
	write sqlitex.Writer // writes; opened lazily in browse mode

	schema atomic.Pointer[schemaInfo] // refreshed when the store's schema changes (schema.go)
	owner  ownerID                    // lease owner string for this process's writes

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
	s := &Store{path: abs, mode: modeBrowse, readOnly: o.ReadOnly}
	if err := s.openRead(head); err != nil {
		return nil, err
	}
	s.decideWritable()
	return s, nil
}

// OpenReadOnly opens a store for browsing only: no decision can be made
// through it.
func OpenReadOnly(path string) (*Store, error) { return Open(path, store.Options{ReadOnly: true}) }

// Create makes a new store at path in WAL mode with the io-harness 0.66
// schema and user_version 7, ready for the write API. It refuses to touch a
// file that already has content.
//
// The store appears whole or not at all: it is built under a temporary name
// beside path and renamed into place only once its schema is committed and
// its connection closed, so a process killed mid-create never leaves a
// half-made file at path (one vigil would refuse to open, and refuse to
// create over).
func Create(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, storeErr(path, store.ErrNotFound, err.Error(), err)
	}
	if err := checkCreatable(abs); err != nil {
		return nil, err
	}
	tmp, err := buildBeside(abs)
	if err != nil {
		return nil, err
	}
	if err := placeNoClobber(tmp, abs); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	db, err := sqlitex.OpenWrite(abs)
	if err != nil {
		return nil, mapDriverErr(abs, err)
	}
	return newWriter(abs, db)
}

// checkCreatable refuses a directory or a file that has content.
func checkCreatable(abs string) error {
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return storeErr(abs, store.ErrIsDirectory, "", nil)
	case fi.Size() > 0:
		return storeErr(abs, store.ErrExists, "refusing to create a store over it", nil)
	}
	return nil
}

// buildBeside writes a complete, closed store under a temporary name in
// abs's directory (the same file system, so the rename is atomic) and
// returns that name. Closing the only connection checkpoints the WAL and
// removes it, so the one file holds everything.
func buildBeside(abs string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".creating-*")
	if err != nil {
		return "", createDirErr(abs, err)
	}
	tmp := f.Name()
	f.Close() // no SQLite connection holds it yet: closing drops no lock
	fail := func(err error) (string, error) {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"} {
			os.Remove(p)
		}
		return "", mapDriverErr(abs, err)
	}
	db, err := sqlitex.OpenWrite(tmp)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	// WAL is a property of the file; setting it is right only because this
	// store is new and ours.
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		db.Close()
		return fail(err)
	}
	if err := initSchema(ctx, db); err != nil {
		db.Close()
		return fail(err)
	}
	if err := db.Close(); err != nil {
		return fail(err)
	}
	return tmp, nil
}

// placeNoClobber moves tmp to abs unless a file with content appeared there
// meanwhile: a hard link fails if abs exists, where a rename would replace
// it. An empty file at abs (allowed by Create) is replaced.
func placeNoClobber(tmp, abs string) error {
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return os.Rename(tmp, abs)
	}
	if err := os.Link(tmp, abs); err != nil {
		if errors.Is(err, os.ErrExist) {
			return storeErr(abs, store.ErrExists, "refusing to create a store over it", nil)
		}
		// A file system without hard links: rename, having checked above.
		if err := checkCreatable(abs); err != nil {
			return err
		}
		return os.Rename(tmp, abs)
	}
	return os.Remove(tmp)
}

// OpenWriter opens an existing store (one made by Create or by io-harness)
// for the write API. A store an older io-harness wrote is first brought up
// to the current schema, in one transaction, as io-harness's own open would
// (migrate.go): every write then finds the tables and columns it needs.
func OpenWriter(path string) (*Store, error) {
	abs, _, err := checkStoreFile(path)
	if err != nil {
		return nil, err
	}
	db, err := sqlitex.OpenWrite(abs)
	if err != nil {
		return nil, mapDriverErr(abs, err)
	}
	s, err := newWriter(abs, db)
	if err != nil {
		return nil, err
	}
	if err := s.check(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.migrate(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

var memSeq atomic.Int64

// Memory is a throwaway in-memory store with the full schema, for tests and
// runs nobody needs to keep.
func Memory() (*Store, error) {
	name := fmt.Sprintf("file:vigil-mem-%d?mode=memory&cache=private&_pragma=busy_timeout(5000)&_txlock=immediate", memSeq.Add(1))
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, err
	}
	sqlitex.Pin(db)
	if err := initSchema(context.Background(), db); err != nil {
		db.Close()
		return nil, err
	}
	return newWriter(":memory:", db)
}

func newWriter(abs string, db *sql.DB) (*Store, error) {
	s := &Store{path: abs, mode: modeWriter, read: db, owner: newOwner()}
	s.write.Use(db)
	si, err := loadSchema(context.Background(), db)
	if err != nil {
		db.Close()
		return nil, mapDriverErr(abs, err)
	}
	s.setSchema(si)
	return s, nil
}

func initSchema(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", FormatVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// checkStoreFile answers the cheap questions before SQLite sees the path:
// missing, a directory, empty, not SQLite, or stamped by a newer io-harness.
// It returns the header too.
func checkStoreFile(path string) (string, []byte, error) {
	abs, head, err := sqlitex.Preflight{}.Check(path)
	if err != nil {
		return "", nil, err
	}
	if v := sqlitex.UserVersion(head); v > FormatVersion {
		return "", nil, storeErr(abs, store.ErrNewerFormat, newerDetail(v), nil)
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
		return "", nil, storeErr(abs, store.ErrNewerFormat, newerDetail(v), nil)
	}
	return abs, s.Head, nil
}

func newerDetail(v int64) string {
	return fmt.Sprintf("io-harness store format %d, vigil reads up to %d; upgrade vigil", v, FormatVersion)
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

// check refuses a newer format or a file without the io-harness tables, and
// learns which tables and columns this store has (0.22 and 0.29 stores lack
// later ones).
func (s *Store) check(ctx context.Context) error {
	var v int64
	if err := s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return mapDriverErr(s.path, err)
	}
	if v > FormatVersion {
		return storeErr(s.path, store.ErrNewerFormat, newerDetail(v), nil)
	}
	si, err := loadSchema(ctx, s.read)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	if !si.has("runs") || !si.has("steps") {
		return storeErr(s.path, store.ErrNotAStore, "SQLite, but without io-harness's runs and steps tables", nil)
	}
	// Corruption inside the file shows only when a query touches it: touch
	// the tables every view needs now, so a damaged store fails at open.
	for _, q := range []string{
		"SELECT id FROM runs ORDER BY id DESC LIMIT 1",
		"SELECT id FROM steps ORDER BY id DESC LIMIT 1",
	} {
		rows, err := s.read.QueryContext(ctx, q)
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return mapDriverErr(s.path, err)
		}
	}
	s.setSchema(si)
	return nil
}

// decideWritable works out, without writing, whether decisions can be made.
func (s *Store) decideWritable() {
	ok, why := sqlitex.Writable(s.path, s.readOnly)
	s.readOnly, s.roReason = !ok, why
}

// writer returns the connection decisions and writes go through, opening it
// on first use in browse mode.
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
