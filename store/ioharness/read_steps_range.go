package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// stepPage is how many rows EachStepRow hands over at once.
const stepPage = 1024

// EachStepRow reads the run's timeline rows with from <= id <= to (to 0:
// every row from from on), in row order, a page at a time. It visits only
// the ids the run's rows occupy (rows.go), clamped to [from, to], one chunk
// of ids a read: a window of a run of a million steps reads its own rows.
func (s *Store) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]store.StepRow) error) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	if to <= 0 {
		to = math.MaxInt64
	}
	ranges, err := s.runRanges(ctx, "steps", []int64{run})
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	q := fmt.Sprintf("SELECT id, run_id, step, %s FROM steps WHERE id >= ? AND id <= ? AND run_id IN (%s) ORDER BY id",
		stepRowCols, sqlitex.IDList([]int64{run}))
	page := make([]store.StepRow, 0, stepPage)
	flush := func() error {
		if len(page) == 0 {
			return nil
		}
		err := fn(page)
		page = page[:0]
		return err
	}
	for _, r := range ranges {
		first, last := max(r.first, from), min(r.last, to)
		if r.first == math.MinInt64 {
			first = max(from, 0) // the whole (small) table in one read
		}
		for lo := first; lo <= last; lo += readChunk {
			hi := min(lo+readChunk-1, last)
			if r.first == math.MinInt64 {
				hi = last
			}
			// Heads of fields too big for SQL are read after the rows are
			// let go (bigHeads reads on its own).
			xs, err := s.readStepRows(ctx, q, []any{lo, hi})
			if err != nil {
				return err
			}
			got, err := s.bigHeads(ctx, xs)
			if err != nil {
				return err
			}
			for _, x := range got {
				page = append(page, x)
				if len(page) == stepPage {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if hi == last {
				break
			}
		}
	}
	return flush()
}

// ProviderCallsFor reads the run's provider attempts under steps lo..hi
// (provider_calls has a run_id index).
func (s *Store) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]store.ProviderCall, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	if !s.si().has("provider_calls") {
		return nil, nil
	}
	var out []store.ProviderCall
	err = s.eachRow(ctx, "SELECT "+s.providerCallCols()+" FROM provider_calls WHERE run_id = ? AND step >= ? AND step <= ? ORDER BY id",
		[]any{run, lo, hi}, func(r *sql.Rows) error {
			c, err := scanProviderCall(r)
			out = append(out, c)
			return err
		})
	return out, err
}
