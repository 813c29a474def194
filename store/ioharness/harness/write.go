package harness

import (
	"context"
	"database/sql"
	"errors"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// The write API mirrors io-harness's Store methods, statement for
// statement, so a Go harness writes runs io-harness itself can open and
// resume. Writes go through one connection whose transactions are BEGIN
// IMMEDIATE: a deferred transaction that reads and then writes fails at
// once with SQLITE_BUSY when another process writes, whatever the timeout.

// inTx runs fn in one write transaction: all of it lands or none.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	db, err := s.writer()
	if err != nil {
		return err
	}
	defer func() { s.write.Failed(s.read, err) }()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		var ce *ConflictError
		var re *store.RefusedError
		var se *store.Error
		if errors.As(err, &ce) || errors.As(err, &re) || errors.As(err, &se) {
			return err
		}
		return mapDriverErr(s.path, err)
	}
	return mapDriverErr(s.path, tx.Commit())
}

// exec runs one autocommit write statement.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	db, err := s.writer()
	if err != nil {
		return nil, err
	}
	res, err := db.ExecContext(ctx, q, args...)
	err = mapDriverErr(s.path, err)
	s.write.Failed(s.read, err)
	return res, err
}

// insert runs one autocommit INSERT and returns the new row's id as text.
func (s *Store) insert(ctx context.Context, q string, args ...any) (string, error) {
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return "", err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return "", mapDriverErr(s.path, err)
	}
	return schema.ID(id), nil
}

// runKey turns a run id into the integer key, refusing text that is not one.
func (s *Store) runKey(id string) (int64, error) {
	n, ok := schema.ParseID(id)
	if !ok {
		return 0, storeErr(s.path, store.ErrNoSuchRun, id, nil)
	}
	return n, nil
}

func (s *Store) needTable(table string) error {
	if !s.si().Has(table) {
		return storeErr(s.path, store.ErrUnsupported,
			"this store has no "+table+" table (written by an older io-harness; open it once with a newer io-harness to migrate)", nil)
	}
	return nil
}

// nullable passes "" as NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullableInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
