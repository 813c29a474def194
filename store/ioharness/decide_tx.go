package ioharness

import (
	"context"
	"database/sql"
	"errors"

	"github.com/vigil-run/vigil/store"
)

// inTx runs fn in one write transaction on the deciding connection: all of
// it lands or none. Its transactions are BEGIN IMMEDIATE: a deferred
// transaction that reads and then writes fails at once with SQLITE_BUSY
// when another process writes, whatever the timeout.
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
		var re *store.RefusedError
		var se *store.Error
		if errors.As(err, &re) || errors.As(err, &se) {
			return err
		}
		return mapDriverErr(s.path, err)
	}
	return mapDriverErr(s.path, tx.Commit())
}
