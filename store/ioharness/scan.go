package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// scanChunk is how many row ids one read of a backward scan covers. Each
// chunk is its own short autocommit read, so a scan never pins the WAL.
const scanChunk = 8192

// scanBack reads the rows of a per-run table (steps, context_events, …)
// that belong to some runs. io-harness indexes none of these tables by
// run_id, so a plain "WHERE run_id = ?" reads the whole table. Rows are
// appended in time order and a run's rows all come after its start, so the
// scan walks row ids downward from the end in chunks and stops once every
// run is done: done() sees each row of a target run and says when the rows
// below can no longer matter (for example, step 1 has been seen). One more
// chunk is read after the last run is done, for rows a concurrent writer
// interleaved (provider retries of step 1 land just before it). Results come
// newest first.
type scanSpec struct {
	table string
	cols  string // columns after "id, run_id, step"
	where string // extra filter, ANDed; its parameters are args
	args  []any
	runs  []int64
	done  func(run int64, step int) bool
	top   int64 // start below this row id (0: the table's end)
}

func scanBack[T any](ctx context.Context, db *sql.DB, sp scanSpec,
	read func(rows *sql.Rows) (item T, run int64, step int, err error)) ([]T, error) {
	out, _, _, err := scanBackSome(ctx, db, sp, 0, read)
	return out, err
}

// scanBackSome is scanBack that reads at most chunks chunks (0: no bound).
// It also returns the runs not done yet and the row id the reads stopped
// above: every row at or below it is unread.
func scanBackSome[T any](ctx context.Context, db *sql.DB, sp scanSpec, chunks int,
	read func(rows *sql.Rows) (item T, run int64, step int, err error)) (out []T, left []int64, below int64, err error) {
	if len(sp.runs) == 0 {
		return nil, nil, 0, nil
	}
	top := sp.top
	if top == 0 {
		if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM "+sp.table).Scan(&top); err != nil {
			return nil, nil, 0, err
		}
	}
	if top <= 0 {
		return nil, nil, 0, nil // an empty table: nothing to read, nobody left
	}
	pending := make(map[int64]bool, len(sp.runs))
	for _, r := range sp.runs {
		pending[r] = true
	}
	runFilter, ids := runIn(sp.runs)
	q := fmt.Sprintf("SELECT id, run_id, step%s FROM %s WHERE id > ? AND id <= ? AND %s%s ORDER BY id DESC",
		prefixComma(sp.cols), sp.table, runFilter, andClause(sp.where))
	margin := false
	hi := top
	for n := 0; hi > 0 && (chunks == 0 || n < chunks || margin); n, hi = n+1, hi-scanChunk {
		err := func() error {
			rows, err := db.QueryContext(ctx, q, append(append([]any{hi - scanChunk, hi}, ids...), sp.args...)...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				item, run, step, err := read(rows)
				if err != nil {
					return err
				}
				out = append(out, item)
				if pending[run] && sp.done != nil && sp.done(run, step) {
					delete(pending, run)
				}
			}
			return rows.Err()
		}()
		if err != nil {
			return nil, nil, 0, err
		}
		if margin {
			return out, nil, 0, nil
		}
		margin = len(pending) == 0
	}
	if len(pending) == 0 || hi <= 0 {
		return out, nil, 0, nil
	}
	for r := range pending {
		left = append(left, r)
	}
	slices.Sort(left)
	return out, left, hi, nil
}

// firstStep ends a run's scan at its first step. Rows of step 0 (checks
// made before the first step) are written just before step 1's, so the
// extra chunk read after the last run is done picks them up.
func firstStep(_ int64, step int) bool { return step <= 1 }

func prefixComma(cols string) string {
	if cols == "" {
		return ""
	}
	return ", " + cols
}

func andClause(where string) string {
	if where == "" {
		return ""
	}
	return " AND " + where
}
