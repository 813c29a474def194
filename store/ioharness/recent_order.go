package ioharness

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// The newest page by id is the newest page of the list only while ids
// follow start times, as io-harness numbers the runs it starts. Runs
// imported from elsewhere get ids in import order: the page of the newest
// ids is then not the newest runs, and a first frame drawn from it would
// put the wrong runs at the top until the rest arrived.

// pageIsNewest says whether the page (the runs with ids from bound on,
// trimmed to whole trees, kept) is the top of the runs list as vigil orders
// it (views' newest first: start time, then id): no run below bound could
// sort above a root of the page, and no run below bound belongs to a tree
// in it. It is one pass over the runs table in SQLite, conservative: a
// start time it cannot compare as text (any shape but io-harness's
// ISO-8601 with milliseconds) counts as newer, and so sends the page to
// the exact reading (newestByStart).
func (s *Store) pageIsNewest(ctx context.Context, kept []store.Run, bound int64) (bool, error) {
	si := s.si()
	if !si.hasCol("runs", "parent_run_id") && !si.hasCol("runs", "started_at") {
		return true, nil // ids alone order the list, and every run is a root
	}
	var oldest time.Time
	roots := 0
	for _, r := range kept {
		if r.ParentID == "" && (roots == 0 || r.StartedAt.Before(oldest)) {
			oldest = r.StartedAt
		}
		if r.ParentID == "" {
			roots++
		}
	}
	var conds []string
	args := []any{bound}
	if si.hasCol("runs", "parent_run_id") {
		// A child numbered below its parent's page, or a run of the page
		// whose parent is gone (an orphan, listed as a root: the trimming
		// left it out).
		conds = append(conds, "(r.id < ?1 AND r.parent_run_id >= ?1)",
			"(r.id >= ?1 AND r.parent_run_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = r.parent_run_id))")
	}
	if si.hasCol("runs", "started_at") {
		newer := "(r.id < ?1 AND r.started_at IS NOT NULL)" // a page root with no start sorts below any run with one
		if !oldest.IsZero() {
			// In io-harness's shape (same width), text order is time
			// order; ties go to the page (the higher id sorts first). Any
			// other text vigil reads as a time starts with its date and is
			// off by a day at most (an offset), so text three days older
			// than the page is older whatever its shape: the shape is
			// looked at only above that.
			newer = `(r.id < ?1 AND r.started_at > ?3 AND NOT (typeof(r.started_at) = 'text' AND length(r.started_at) = 24
				AND substr(r.started_at, 11, 1) = 'T' AND substr(r.started_at, 24, 1) = 'Z' AND r.started_at <= ?2))`
			args = append(args, oldest.UTC().Format(isoMillisLayout), oldest.UTC().Add(-72*time.Hour).Format(isoMillisLayout))
		}
		conds = append(conds, newer)
	}
	q := "SELECT 1 FROM runs r WHERE " + strings.Join(conds, " OR ") + " LIMIT 1"
	found := false
	err := s.eachRow(ctx, q, args, func(*sql.Rows) error {
		found = true
		return nil
	})
	return !found, err
}

const isoMillisLayout = "2006-01-02T15:04:05.000Z"

// errNoForest: the parent links loop (a damaged store), so which runs the
// list shows as roots is the run model's to work out from every run.
var errNoForest = errors.New("the runs' parent links loop")

// newestByStart reads the newest runs in the list's order when ids do not
// follow it: each run's id, parent and start (three columns, parsed as the
// list parses them), the roots ordered as views orders them (start time,
// then id, newest first; a run whose parent is not in the store is a
// root), whole trees taken from the newest root on while they fit in
// limit, then those runs' rows. ids are the page's, newest id first.
func (s *Store) newestByStart(ctx context.Context, limit int) ([]int64, error) {
	si := s.si()
	type lite struct {
		id, parent int64
		hasParent  bool
		start      time.Time
	}
	var all []lite
	q := "SELECT id, " + si.col("runs", "parent_run_id", "NULL") + ", " + si.col("runs", "started_at", "NULL") + " FROM runs"
	err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
		var x lite
		var parent sql.NullInt64
		var start sql.NullString
		if err := r.Scan(&x.id, &parent, &start); err != nil {
			return err
		}
		x.parent, x.hasParent, x.start = parent.Int64, parent.Valid, nullTime(start)
		all = append(all, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	at := make(map[int64]int, len(all))
	for i, x := range all {
		at[x.id] = i
	}
	children := map[int64][]int64{}
	var roots []int
	for i, x := range all {
		if _, ok := at[x.parent]; x.hasParent && ok {
			children[x.parent] = append(children[x.parent], x.id)
		} else {
			roots = append(roots, i)
		}
	}
	slices.SortFunc(roots, func(a, b int) int {
		if c := all[b].start.Compare(all[a].start); c != 0 {
			return c
		}
		return cmp.Compare(all[b].id, all[a].id)
	})
	reached := 0
	var page []int64
	full := false
	for _, ri := range roots {
		tree := []int64{all[ri].id}
		for i := 0; i < len(tree); i++ {
			tree = append(tree, children[tree[i]]...)
		}
		reached += len(tree)
		if !full && len(page)+len(tree) <= limit {
			page = append(page, tree...)
		} else {
			full = true
		}
	}
	if reached != len(all) {
		return nil, errNoForest
	}
	slices.SortFunc(page, func(a, b int64) int { return cmp.Compare(b, a) })
	return page, nil
}

// runsByID reads the rows of these runs, newest id first.
func (s *Store) runsByID(ctx context.Context, ids []int64) ([]store.Run, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.queryRuns(ctx, s.runSelect(listGoalBytes, "WHERE r.id IN ("+sqlitex.IDList(ids)+")"))
}
