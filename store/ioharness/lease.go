package ioharness

import (
	"context"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// RunLease is the run's own lease row, or nil when nobody holds it.
func (s *Store) RunLease(ctx context.Context, runID string) (*store.Lease, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	if !s.si().has("run_leases") {
		return nil, nil
	}
	l, err := readLease(ctx, s.read, run)
	return l, mapDriverErr(s.path, err)
}

type querier = schema.Querier

func readLease(ctx context.Context, q querier, run int64) (*store.Lease, error) {
	return schema.ReadLease(ctx, q, run)
}
