package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// Exact per-run reads.
//
// io-harness indexes none of its per-run tables (steps, context_events,
// policy_events, ledger_observations, …) by run_id, and vigil must never
// add an index to a store it reads. A backward scan that stops near a run's
// first step is cheap but not exact: a resume writes low-step rows late
// (skipped checkpoints, step-0 policy events, a recovery's observation under
// the step the call was made), and provider retries of step 1 can sit tens
// of thousands of rows before step 1's commit in a busy store. So the reads
// that must be exact — the canonical trace, the timeline, a step's detail,
// a run's events — read every row of the run, through what is known of
// where its rows lie:
//
//   - For each (table, run), the first and last row id of the run's rows
//     up to some row id ("through"). Ids only grow (AUTOINCREMENT, or max+1
//     for the tables without it), so rows the run adds later lie above
//     through, and bringing a span up to date reads only the rows added
//     since: O(new rows), whatever the table's size.
//   - A run created after the table was first read needs no learning at
//     all: its rows all lie above the table's end at that moment ("birth").
//   - Any other run is learned once, by one filtered pass over the table
//     (in short chunks, so no read pins the WAL): the one read whose cost
//     grows with the store, paid once per run and table for the life of
//     the handle.
//
// A read then visits only the id range the run's rows occupy. What was
// learned of a table is vouched for on each use by its witness
// (witness.go): a table where an id may have been handed out again (rows
// deleted and written anew, a deleted session) is learned again.

// smallTable is a table size below which learning bounds is not worth its
// reads: the whole table is one short read.
const smallTable = readChunk

// learnChunk is how many row ids one read of a learning pass covers.
const learnChunk = 1 << 16

// readChunk is how many row ids one read of a run's rows covers.
const readChunk = scanChunk

// span is where a run's rows lie in a table, as known through a row id:
// every row of the run with id <= through has first <= id <= last (first
// is 0 when there is none).
type span struct {
	first, last int64
	through     int64
}

type tableBounds struct {
	mu         sync.Mutex
	wit        witness // vouches for all of the below (witness.go)
	gen        uint64  // moves when it is all dropped
	birthKnown bool
	birthRuns  int64 // runs above this were created after birthTop was the table's end
	birthTop   int64
	spans      map[int64]span
	passes     int // learning passes made over the whole table
	// all: a pass learned every run through allThrough, so a run with no
	// span has no rows at or below it.
	all        bool
	allThrough int64
}

type rowBounds struct {
	mu     sync.Mutex
	tables map[string]*tableBounds
}

func (b *rowBounds) table(name string) *tableBounds {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tables == nil {
		b.tables = map[string]*tableBounds{}
	}
	t := b.tables[name]
	if t == nil {
		t = &tableBounds{spans: map[int64]span{}}
		b.tables[name] = t
	}
	return t
}

// forget drops everything learned (the schema changed).
func (b *rowBounds) forget() {
	b.mu.Lock()
	b.tables = nil
	b.mu.Unlock()
}

func tableTop(ctx context.Context, db *sql.DB, table string) (int64, error) {
	var top int64
	err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM "+table).Scan(&top)
	return top, err
}

// runRanges returns the id ranges, merged and ascending, that hold every row
// of runs in table as of its end now.
func (s *Store) runRanges(ctx context.Context, table string, runs []int64) ([]span, error) {
	db := s.read
	top, err := tableTop(ctx, db, table)
	if err != nil || top == 0 || len(runs) == 0 {
		return nil, err
	}
	if top <= smallTable {
		return []span{{first: math.MinInt64, last: top}}, nil // every row, in one read
	}
	tb := s.rows.table(table)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if err := tb.vouch(ctx, s, table, top); err != nil {
		return nil, err
	}
	if err := tb.checkBirth(ctx, db, top); err != nil {
		return nil, err
	}
	var unknown, stale []int64
	for _, r := range runs {
		sp, ok := tb.spans[r]
		if !ok && tb.all {
			tb.spans[r] = span{through: tb.allThrough}
			if tb.allThrough < top {
				stale = append(stale, r)
			}
			continue
		}
		switch {
		case !ok && tb.birthKnown && r > tb.birthRuns:
			// Born after the table's end was birthTop: nothing at or below it.
			tb.spans[r] = span{through: tb.birthTop}
			stale = append(stale, r)
		case !ok:
			unknown = append(unknown, r)
		case sp.through < top:
			stale = append(stale, r)
		}
	}
	switch {
	case len(unknown) > 0 && tb.passes >= 2:
		// A third time runs are to be learned: one pass that learns every run
		// costs about what two that learn a few do, and no later read of any
		// run pays again.
		if err := tb.scanAll(ctx, db, table, top); err != nil {
			return nil, err
		}
		for _, r := range unknown {
			if _, ok := tb.spans[r]; !ok {
				tb.spans[r] = span{through: top}
			}
		}
	case len(unknown) > 0:
		tb.passes++
		if err := tb.scan(ctx, db, table, unknown, 0, top); err != nil {
			return nil, err
		}
	}
	// Bring the others up to top over the rows added since, grouped by how
	// far each is known so that runs learned together extend together.
	byThrough := map[int64][]int64{}
	for _, r := range stale {
		byThrough[tb.spans[r].through] = append(byThrough[tb.spans[r].through], r)
	}
	for through, rs := range byThrough {
		if err := tb.scan(ctx, db, table, rs, through, top); err != nil {
			return nil, err
		}
	}
	var out []span
	for _, r := range runs {
		if sp := tb.spans[r]; sp.first > 0 {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b span) int { return cmpInt64(a.first, b.first) })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.first <= merged[n-1].last+1 {
			merged[n-1].last = max(merged[n-1].last, sp.last)
			continue
		}
		merged = append(merged, sp)
	}
	return merged, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkBirth takes the birth bound the first time the table is read (or
// read again after what was learned of it was dropped); the witness
// vouches for it after.
func (tb *tableBounds) checkBirth(ctx context.Context, db *sql.DB, top int64) error {
	if tb.birthKnown || len(tb.spans) > 0 {
		return nil
	}
	// The runs top is read after the table's end: a run created in between
	// counts as older, which only costs it a learning pass.
	var runs int64
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM runs").Scan(&runs); err != nil {
		return err
	}
	tb.birthKnown, tb.birthRuns, tb.birthTop = true, runs, top
	return nil
}

// scanAll learns every run's rows through top, in one pass.
func (tb *tableBounds) scanAll(ctx context.Context, db *sql.DB, table string, top int64) error {
	found, err := spansIn(ctx, db, "SELECT run_id, MIN(id), MAX(id) FROM "+table+" WHERE id > ? AND id <= ? GROUP BY run_id", 0, top)
	if err != nil {
		return err
	}
	for r, sp := range found {
		sp.through = top
		tb.spans[r] = sp
	}
	tb.passes++
	tb.all, tb.allThrough = true, top
	return nil
}

// scan learns the runs' rows in (from, top], one chunk per read, and moves
// their spans' through to top. A pass that fails part way keeps nothing.
func (tb *tableBounds) scan(ctx context.Context, db *sql.DB, table string, runs []int64, from, top int64) error {
	q := fmt.Sprintf("SELECT run_id, MIN(id), MAX(id) FROM %s WHERE id > ? AND id <= ? AND run_id IN (%s) GROUP BY run_id",
		table, sqlitex.IDList(runs))
	found, err := spansIn(ctx, db, q, from, top)
	if err != nil {
		return err
	}
	for _, r := range runs {
		sp := tb.spans[r] // zero for an unknown run: from is 0 then
		if f, ok := found[r]; ok {
			if sp.first == 0 {
				sp.first = f.first
			}
			sp.last = f.last
		}
		sp.through = top
		tb.spans[r] = sp
	}
	return nil
}

// runSpec is an exact read of some runs' rows of one table.
type runSpec struct {
	table string
	cols  string // columns after "id, run_id, step"
	where string // extra filter, ANDed; its parameters are args
	args  []any
	runs  []int64
	// oneStep narrows the read to the rows under step; for a run whose
	// rows are many, only the blocks that may hold it are read
	// (stepzones.go).
	oneStep bool
	step    int
}

// readRuns reads every row of the runs in sp, in row-id order: exactly the
// rows "WHERE run_id IN (…)" would return, without reading the table whole
// after its bounds are learned. Each chunk is its own short read.
func readRuns[T any](ctx context.Context, s *Store, sp runSpec, read func(*sql.Rows) (T, error)) ([]T, error) {
	var ranges []span
	narrowed := false
	from := sp.table
	if sp.oneStep {
		sp.where = strings.TrimPrefix(sp.where+" AND step = ?", " AND ")
		sp.args = append(append([]any(nil), sp.args...), sp.step)
		// By the row id range alone: an index on run_id (provider_calls)
		// would visit every row of the run.
		from += " NOT INDEXED"
		if len(sp.runs) == 1 {
			var err error
			if ranges, narrowed, err = s.stepRanges(ctx, sp.table, sp.runs[0], sp.step, stepRowOf(ctx, sp.runs[0], sp.step)); err != nil {
				return nil, err
			}
		}
	}
	if !narrowed {
		var err error
		if ranges, err = s.runRanges(ctx, sp.table, sp.runs); err != nil {
			return nil, err
		}
	}
	q := fmt.Sprintf("SELECT id, run_id, step%s FROM %s WHERE id >= ? AND id <= ? AND run_id IN (%s)%s ORDER BY id",
		prefixComma(sp.cols), from, sqlitex.IDList(sp.runs), andClause(sp.where))
	var out []T
	for _, r := range ranges {
		for lo := r.first; lo <= r.last; lo += readChunk {
			hi := min(lo+readChunk-1, r.last)
			if r.first == math.MinInt64 {
				hi = r.last
			}
			err := s.eachRow(ctx, q, append([]any{lo, hi}, sp.args...), func(rows *sql.Rows) error {
				item, err := read(rows)
				out = append(out, item)
				return err
			})
			if err != nil {
				return nil, err
			}
			if hi == r.last {
				break
			}
		}
	}
	return out, nil
}

// spansIn reads q (run, first id, last id of its rows, over ids in
// (lo, hi]) one chunk of ids at a time through (from, top]: each run's
// first and last row there. A read that fails part way returns nothing.
func spansIn(ctx context.Context, db *sql.DB, q string, from, top int64) (map[int64]span, error) {
	found := map[int64]span{}
	for lo := from; lo < top; lo += learnChunk {
		hi := min(lo+learnChunk, top)
		err := func() error {
			rows, err := db.QueryContext(ctx, q, lo, hi)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var run, first, last int64
				if err := rows.Scan(&run, &first, &last); err != nil {
					return err
				}
				sp, ok := found[run]
				if !ok {
					sp.first = first
				}
				sp.last = last
				found[run] = sp
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}
