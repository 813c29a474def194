package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sync"
)

// One step's rows of a long run.
//
// A step's detail reads the rows of other tables under its number
// (ledger_observations, edits, policy_events, provider_calls), and none of
// them is indexed by step: provider_calls by run_id alone, the others not
// at all. Reading the run's row span (rows.go) with "step = ?" is exact
// but visits every row of the run: a second or two for each step of a run
// of a million steps. Nor can the rows' place be guessed from the step:
// a resume writes rows for old steps late, anywhere above.
//
// So for a run whose span in a table is long, vigil learns once where each
// step may lie: for each block of 1<<zoneShift row ids, the least and
// greatest step of the run's rows in it. A step's rows are then read from
// only the blocks whose range holds it, which is exact: every row of the
// run at or below the learned end is in a block whose range holds its
// step. Rows added later are learned before the next read, over the rows
// added since, and what was learned is vouched for by the table's witness,
// like a span (witness.go): a table where an id may have been handed out
// again is learned again. Rows deleted below only make a block's range
// wider than it need be.

// zoneShift sets a block's size: 4 096 row ids.
const zoneShift = 12

// stepRange is the least and greatest step of a run's rows in one block.
type stepRange struct{ lo, hi int }

// runZones is what is known of one run's rows in one table.
type runZones struct {
	from, through int64  // learned over the ids in (from, through]
	gen           uint64 // of what was learned of the table (rows.go) when it was
	blocks        map[int64]stepRange
}

type zoneKey struct {
	table string
	run   int64
}

type stepZones struct {
	mu   sync.Mutex
	runs map[zoneKey]*runZones
}

func (z *stepZones) forget() {
	z.mu.Lock()
	z.runs = nil
	z.mu.Unlock()
}

// stepRanges returns the id ranges, ascending, that hold every row of run
// in table under step, as of the table's end now. ok is false for a table
// small enough to read whole in one go, or a run short enough to read by
// its span: the caller reads it so.
//
// A run met for the first time is learned from where its rows are known
// to start (a span an earlier read learned, rows.go), else over the whole
// table, a block a read: the one pass that finds its rows also learns
// their steps.
func (s *Store) stepRanges(ctx context.Context, table string, run int64, step int, row int64) (out []span, ok bool, err error) {
	db := s.read
	top, err := tableTop(ctx, db, table)
	if err != nil || top <= smallTable {
		return nil, false, err
	}
	s.zones.mu.Lock()
	defer s.zones.mu.Unlock()
	if s.zones.runs == nil {
		s.zones.runs = map[zoneKey]*runZones{}
	}
	gen, from, err := s.vouchedStart(ctx, table, run, top)
	if err != nil {
		return nil, false, err
	}
	key := zoneKey{table, run}
	z := s.zones.runs[key]
	if z != nil && (z.gen != gen || z.through > top) {
		z = nil // an id may have been handed out again: learned again
	}
	if z == nil {
		// Only a long run is worth it: a short one's rows are read by its
		// span, whose learning is shared with every other run's (rows.go).
		if long, err := s.longRun(ctx, run, row); err != nil || !long {
			return nil, false, err
		}
		z = &runZones{from: from, through: from, gen: gen, blocks: map[int64]stepRange{}}
	}
	if z.through < top {
		if err := z.learn(ctx, db, table, run, top); err != nil {
			delete(s.zones.runs, key)
			return nil, false, err
		}
	}
	s.zones.runs[key] = z
	// The blocks whose range holds step, ascending, merged where they
	// touch, clamped to what was learned.
	blocks := make([]int64, 0, 4)
	for b, r := range z.blocks {
		if r.lo <= step && step <= r.hi {
			blocks = append(blocks, b)
		}
	}
	slices.Sort(blocks)
	for _, b := range blocks {
		lo, hi := max(b<<zoneShift, z.from+1), min((b+1)<<zoneShift-1, z.through)
		if n := len(out); n > 0 && out[n-1].last+1 >= lo {
			out[n-1].last = hi
			continue
		}
		out = append(out, span{first: lo, last: hi})
	}
	return out, true, nil
}

// zoneMinSpan is how long a run's span of steps rows is before its side
// rows are read by blocks: below it, reading its span is about as cheap.
const zoneMinSpan = 4 * readChunk

// longRun reports whether run's steps rows span zoneMinSpan ids or more
// (the span the timeline's reads learn, rows.go). row is one of its steps
// rows: when the run has a steps row about zoneMinSpan ids before it or
// after it, it is long without learning its span, a pass over the whole
// table. Which way a run is read is only a matter of cost: both are exact.
func (s *Store) longRun(ctx context.Context, run, row int64) (bool, error) {
	if row > 0 {
		const probe = 256
		for _, lo := range []int64{row - zoneMinSpan - probe, row + zoneMinSpan} {
			if lo < 0 {
				continue
			}
			var n int
			err := s.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM steps WHERE id > ? AND id <= ? AND run_id = ?", lo, lo+probe, run).Scan(&n)
			if err != nil {
				return false, err
			}
			if n > 0 {
				return true, nil
			}
		}
	}
	ranges, err := s.runRanges(ctx, "steps", []int64{run})
	if err != nil {
		return false, err
	}
	var n int64
	for _, r := range ranges {
		if r.first == math.MinInt64 {
			return false, nil // a small table
		}
		n += r.last - r.first + 1
	}
	return n >= zoneMinSpan, nil
}

// vouchedStart has the table's witness vouch for what was learned of it
// (witness.go) and returns the generation of that learning and a row id
// below which run has no rows in table, as far as what the reads of its
// rows have learned (rows.go) says without reading more: its span's first
// row, or how far a span that found none reaches; else 0.
func (s *Store) vouchedStart(ctx context.Context, table string, run, top int64) (gen uint64, from int64, err error) {
	tb := s.rows.table(table)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if err := tb.vouch(ctx, s, table, top); err != nil {
		return 0, 0, err
	}
	sp, ok := tb.spans[run]
	switch {
	case !ok:
		return tb.gen, 0, nil
	case sp.first > 0:
		return tb.gen, sp.first - 1, nil
	}
	return tb.gen, sp.through, nil
}

// learn brings z up to top: the blocks of the run's rows in (through, top],
// one block a read (an aggregate over one block's ids, which SQLite reads
// by row id with no sort). A read that fails part way leaves z to be
// dropped.
func (z *runZones) learn(ctx context.Context, db *sql.DB, table string, run, top int64) error {
	q := fmt.Sprintf("SELECT MIN(step), MAX(step) FROM %s NOT INDEXED WHERE id > ? AND id <= ? AND run_id = ?", table)
	for lo := z.through; lo < top; {
		b := (lo + 1) >> zoneShift
		hi := min((b+1)<<zoneShift-1, top)
		var mn, mx sql.NullInt64
		if err := db.QueryRowContext(ctx, q, lo, hi, run).Scan(&mn, &mx); err != nil {
			return err
		}
		if mn.Valid {
			r := stepRange{int(mn.Int64), int(mx.Int64)}
			if old, ok := z.blocks[b]; ok { // the block the last read ended inside
				r.lo, r.hi = min(r.lo, old.lo), max(r.hi, old.hi)
			}
			z.blocks[b] = r
		}
		lo = hi
	}
	z.through = top
	return nil
}

// stepRowKey carries the steps row of the step a detail is read for down
// to longRun, which can tell a long run from the rows around it.
type stepRowKey struct{}

type stepRow struct {
	run  int64
	step int
	row  int64
}

func withStepRow(ctx context.Context, run int64, step int, row int64) context.Context {
	return context.WithValue(ctx, stepRowKey{}, stepRow{run, step, row})
}

// stepRowOf is the steps row withStepRow gave for run's step, else 0.
func stepRowOf(ctx context.Context, run int64, step int) int64 {
	if r, ok := ctx.Value(stepRowKey{}).(stepRow); ok && r.run == run && r.step == step {
		return r.row
	}
	return 0
}
