package harness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// Store is a handle for writing an io-harness store: the Go twin of
// io-harness's Store, over the same SQLite schema, reading and writing
// through one connection as io-harness's own handle does.
type Store struct {
	path  string
	read  *sql.DB        // the handle's one connection
	write sqlitex.Writer // the same connection; another after a write that ran out of room

	schema atomic.Pointer[schema.Info] // as learned at open, and after a migration
	owner  ownerID                     // lease owner string for this handle's writes
}

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
	abs, err := checkStoreFile(path)
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
	s := &Store{path: abs, read: db, owner: newOwner()}
	s.write.Use(db)
	si, err := schema.Load(context.Background(), db)
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
	if _, err := tx.ExecContext(ctx, schema.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schema.FormatVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// checkStoreFile answers the cheap questions before SQLite sees the path:
// missing, a directory, empty, not SQLite, or stamped by a newer io-harness.
func checkStoreFile(path string) (string, error) {
	abs, head, err := sqlitex.Preflight{}.Check(path)
	if err != nil {
		return "", err
	}
	if v := sqlitex.UserVersion(head); v > schema.FormatVersion {
		return "", storeErr(abs, store.ErrNewerFormat, schema.NewerDetail(v), nil)
	}
	return abs, nil
}

// check refuses a newer format or a file without the io-harness tables,
// and learns which tables and columns this store has (schema.Check).
func (s *Store) check(ctx context.Context) error {
	si, err := schema.Check(ctx, s.read, s.path)
	if err != nil {
		return err
	}
	s.setSchema(si)
	return nil
}

// si is the schema as last learned.
func (s *Store) si() *schema.Info { return s.schema.Load() }

func (s *Store) setSchema(si *schema.Info) { s.schema.Store(si) }

// writer returns the connection writes go through: the handle's one
// connection, or a new one after a write that ran out of room closed it.
func (s *Store) writer() (*sql.DB, error) { return s.write.Get(s.path) }

// Path is the store's absolute file path (":memory:" for Memory).
func (s *Store) Path() string { return s.path }

// Close releases the connection.
func (s *Store) Close() error {
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close(s.read))
	return errors.Join(errs...)
}
