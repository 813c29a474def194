package schema

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Querier is what reads one row: a connection or a transaction.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ReadLease reads a run's run_leases row, or nil when nobody holds it.
func ReadLease(ctx context.Context, q Querier, run int64) (*store.Lease, error) {
	var owner, acq, ren string
	var gen, ttl int64
	err := q.QueryRowContext(ctx, "SELECT owner, generation, acquired_at, renewed_at, ttl_secs FROM run_leases WHERE run_id = ?", run).
		Scan(&owner, &gen, &acq, &ren, &ttl)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &store.Lease{Owner: owner, Generation: gen, AcquiredAt: ParseTime(acq), RenewedAt: ParseTime(ren),
		TTL: time.Duration(ttl) * time.Second}, nil
}

// MemoryCols are the memory table's columns ScanMemory reads, NULL for
// those an older store lacks.
func MemoryCols(si *Info) string {
	return "workspace, key, value, run_id, step, created_at, " + si.Col("memory", "kind", "NULL") + ", " +
		si.Col("memory", "pinned", "NULL")
}

// ScanMemory reads one memory row selected with MemoryCols.
func ScanMemory(r interface{ Scan(...any) error }) (store.MemoryEntry, error) {
	var m store.MemoryEntry
	var run int64
	var created string
	var kind sql.NullString
	var pinned sql.NullInt64
	err := r.Scan(&m.Workspace, &m.Key, &m.Value, &run, &m.Step, &created, &kind, &pinned)
	m.RunID, m.CreatedAt, m.Pinned = ID(run), ParseTime(created), pinned.Int64 == 1
	m.Kind = "fact"
	if kind.String == "decision" {
		m.Kind = "decision"
	}
	return m, err
}
