package harness

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// DefaultLeaseTTL is io-harness's DEFAULT_LEASE_TTL.
const DefaultLeaseTTL = 1800 * time.Second

var ownerSeq atomic.Uint64

// ownerID is this handle's lease owner: "<pid>-<unix-nanos>-<seq>", the
// shape io-harness mints, so either side can tell a dead owner by its pid.
// It also remembers the generation of each lease the handle holds.
type ownerID struct {
	id   string
	mu   sync.Mutex
	held map[int64]int64 // run → generation
}

func newOwner() ownerID {
	return ownerID{
		id:   fmt.Sprintf("%d-%d-%d", os.Getpid(), time.Now().UnixNano(), ownerSeq.Add(1)-1),
		held: map[int64]int64{},
	}
}

func (o *ownerID) generation(run int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	g, ok := o.held[run]
	return g, ok
}

func (o *ownerID) set(run, gen int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if gen == 0 {
		delete(o.held, run)
		return
	}
	o.held[run] = gen
}

// Owner is the lease owner id of this handle.
func (s *Store) Owner() string { return s.owner.id }

// ConflictError says another live owner holds a run's lease.
type ConflictError struct {
	RunID     string
	Owner     string
	ExpiresAt time.Time
}

func (e *ConflictError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("run %s is not leased to this process", e.RunID)
	}
	return fmt.Sprintf("run %s is held by another owner (%s) until %s", e.RunID, e.Owner,
		e.ExpiresAt.Format(time.RFC3339))
}

// AcquireLease makes this handle the driver of a run. A lease held by
// another owner is taken over only when it has lapsed or its owner process
// is gone; a takeover bumps the generation so the old driver's next step
// commit fails. Returns the generation.
func (s *Store) AcquireLease(ctx context.Context, runID string, ttl time.Duration) (int64, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return 0, err
	}
	var gen int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		held, err := schema.ReadLease(ctx, tx, run)
		if err != nil {
			return err
		}
		secs := max(int64((ttl+time.Second-1)/time.Second), 1) // whole seconds, as stored
		if held == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO run_leases (run_id, owner, generation, ttl_secs)
				VALUES (?, ?, 1, ?) ON CONFLICT(run_id) DO NOTHING`, run, s.owner.id, secs)
		} else {
			mine := held.Owner == s.owner.id
			if !mine && !held.Expired(time.Now()) && store.PIDAlive(held.OwnerPID()) {
				return &ConflictError{RunID: runID, Owner: held.Owner, ExpiresAt: held.RenewedAt.Add(held.TTL)}
			}
			bump := 1
			if mine {
				bump = 0
			}
			var res sql.Result
			res, err = tx.ExecContext(ctx, `UPDATE run_leases SET owner = ?, generation = generation + ?,
				acquired_at = CASE WHEN ? = 0 THEN acquired_at ELSE strftime('%Y-%m-%dT%H:%M:%fZ','now') END,
				renewed_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'), ttl_secs = ?
				WHERE run_id = ? AND owner = ? AND generation = ?`,
				s.owner.id, bump, bump, secs, run, held.Owner, held.Generation)
			if err == nil {
				if n, _ := res.RowsAffected(); n == 0 {
					return &ConflictError{RunID: runID, Owner: held.Owner, ExpiresAt: held.RenewedAt.Add(held.TTL)}
				}
			}
		}
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT generation FROM run_leases WHERE run_id = ? AND owner = ?",
			run, s.owner.id).Scan(&gen)
	})
	if err != nil {
		return 0, err
	}
	s.owner.set(run, gen)
	return gen, nil
}

// RenewLease pushes the lease's expiry out. It fails with a ConflictError
// when another owner has taken the run over.
func (s *Store) RenewLease(ctx context.Context, runID string) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	gen, ok := s.owner.generation(run)
	if !ok {
		return &ConflictError{RunID: runID}
	}
	db, err := s.writer()
	if err != nil {
		return err
	}
	res, err := db.ExecContext(ctx, `UPDATE run_leases SET renewed_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
		WHERE run_id = ? AND owner = ? AND generation = ?`, run, s.owner.id, gen)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.conflict(ctx, runID, run)
	}
	return nil
}

// ReleaseLease gives the run up. Releasing a lease this handle no longer
// holds does nothing.
func (s *Store) ReleaseLease(ctx context.Context, runID string) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	gen, ok := s.owner.generation(run)
	if !ok {
		return nil
	}
	db, err := s.writer()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM run_leases WHERE run_id = ? AND owner = ? AND generation = ?",
		run, s.owner.id, gen); err != nil {
		return mapDriverErr(s.path, err) // still held: a retry can release it
	}
	s.owner.set(run, 0)
	return nil
}

func (s *Store) conflict(ctx context.Context, runID string, run int64) error {
	db, err := s.writer()
	if err != nil {
		return err
	}
	l, err := schema.ReadLease(ctx, db, run)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	if l == nil {
		return &ConflictError{RunID: runID}
	}
	return &ConflictError{RunID: runID, Owner: l.Owner, ExpiresAt: l.RenewedAt.Add(l.TTL)}
}
