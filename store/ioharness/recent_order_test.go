package ioharness_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// runRow is a run a foreign writer (the sqlite3 shell) inserts: an id, its
// parent (0: a root) and its started_at text as stored.
type runRow struct {
	id, parent int64
	started    string
}

// recentOf makes an io-harness 0.66 store holding these runs, written by
// the sqlite3 shell, and returns RecentRuns(limit)'s ids and all flag.
func recentOf(t *testing.T, rows []runRow, limit int) (string, bool, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	var b strings.Builder
	b.WriteString("BEGIN;")
	for _, r := range rows {
		parent, depth := "NULL", 0
		if r.parent != 0 {
			parent, depth = fmt.Sprint(r.parent), 1
		}
		fmt.Fprintf(&b, "INSERT INTO runs (id, goal, file, outcome, provider, parent_run_id, depth, status, started_at) VALUES (%d, 'run %d', '/w', 'success', 'p', %s, %d, 'completed', '%s');",
			r.id, r.id, parent, depth, r.started)
	}
	b.WriteString("COMMIT;")
	sqlite3(t, path, b.String())
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, all, err := s.RecentRuns(ctx, limit)
	if err != nil {
		t.Fatal(err)
	}
	every, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ids(page), all, ids(every)
}

func at(hour int) string { return fmt.Sprintf("2025-01-01T%02d:00:00.000Z", hour) }

// The first page is the top of the runs list, which orders roots by start
// time (views.sortRuns: newest first, then by id), not by id: runs imported
// from elsewhere have ids in import order, and the page of the newest ids
// drew the wrong runs at the top of the first frame until every run was
// read. On main this returned the newest ids, "12 11 10" and "6 5".
func TestRecentRunsFollowStartTimesNotIDs(t *testing.T) {
	// Roots 1…12 started at these hours; root 3 (the newest) has child 13.
	hours := []int{10, 3, 12, 1, 7, 2, 11, 4, 5, 6, 8, 9}
	var rows []runRow
	for i, h := range hours {
		rows = append(rows, runRow{id: int64(i + 1), started: at(h)})
	}
	imported := append(rows, runRow{id: 13, parent: 3, started: "2025-01-01T12:30:00.000Z"})
	if got, all, _ := recentOf(t, imported, 3); got != "13 7 3" || all {
		t.Errorf("imported: RecentRuns(3) = %s (all %v), want the newest root's tree and the next root, 13 7 3", got, all)
	}
	if got, all, _ := recentOf(t, imported, 4); got != "13 7 3 1" || all {
		t.Errorf("imported: RecentRuns(4) = %s (all %v), want 13 7 3 1", got, all)
	}

	// Ids that follow start times keep the page of the newest ids.
	var ordered []runRow
	for i := 1; i <= 12; i++ {
		ordered = append(ordered, runRow{id: int64(i), started: at(i)})
	}
	if got, all, _ := recentOf(t, ordered, 3); got != "12 11 10" || all {
		t.Errorf("ordered: RecentRuns(3) = %s (all %v), want 12 11 10", got, all)
	}

	// A start in another shape vigil reads (SQLite's datetime('now'), an
	// RFC 3339 offset) that sorts below the page as text but is newer in
	// time.
	for _, newer := range []string{"2025-01-01 23:00:00", "2025-01-01T10:00:00-05:00"} {
		rows := append([]runRow(nil), ordered[:6]...)
		rows[1].started = newer // run 2: 23:00 and 15:00 UTC
		if got, _, _ := recentOf(t, rows, 2); got != "6 2" {
			t.Errorf("run 2 started %q: RecentRuns(2) = %s, want 6 2", newer, got)
		}
	}

	// A child numbered below its root's page is read with its tree.
	rows = append([]runRow(nil), ordered[:10]...)
	rows[1] = runRow{id: 2, parent: 10, started: "2025-01-01T10:30:00.000Z"}
	if got, _, _ := recentOf(t, rows, 3); got != "10 9 2" {
		t.Errorf("child 2 of root 10: RecentRuns(3) = %s, want 10 9 2", got)
	}

	// A run of the page whose parent is gone is listed as a root.
	rows = append([]runRow(nil), ordered[:10]...)
	rows[9] = runRow{id: 10, parent: 99, started: at(10)}
	if got, _, _ := recentOf(t, rows, 2); got != "10 9" {
		t.Errorf("orphan 10: RecentRuns(2) = %s, want 10 9", got)
	}

	// Parent links that loop leave the roots to the run model: every run.
	rows = append([]runRow(nil), imported...)
	rows[0].parent, rows[1].parent = 2, 1
	if got, all, every := recentOf(t, rows, 3); got != every || !all {
		t.Errorf("a loop: RecentRuns(3) = %s (all %v), want every run %s", got, all, every)
	}
}
