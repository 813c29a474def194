package ioharness_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Listing every run reads each row through one buffer per query: a row's
// cells and the pointers Scan fills were made for every row, both escaping
// to the heap, a third of what listing 100 k runs allocated (garbage the
// explorer made as fast as it read the rest of the runs).
func TestRunsReadsRowsThroughOneBuffer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	const n = 2000
	sqlite3(t, path, fmt.Sprintf(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < %d)
		INSERT INTO runs (id, goal, file, outcome, provider, parent_run_id, depth, status, started_at)
		SELECT i, 'goal ' || i, '/w', CASE WHEN i %% 3 = 0 THEN NULL ELSE 'success' END, 'p', NULL, 0,
			CASE WHEN i %% 3 = 0 THEN 'running' ELSE 'completed' END,
			strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', '2025-01-01', '+' || i || ' minutes') FROM k;
		INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
		SELECT id, outcome, 1, 3, 300, 1000, started_at FROM runs WHERE outcome IS NOT NULL;`, n))
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list := func() {
		if runs, err := s.Runs(ctx); err != nil || len(runs) != n {
			t.Fatalf("Runs: %d runs, %v", len(runs), err)
		}
	}
	list() // the statements prepared, the schema read
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const rounds = 5
	for range rounds {
		list()
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / rounds / n
	t.Logf("%.0f bytes allocated a run", per)
	if per > 650 {
		t.Errorf("Runs allocates %.0f bytes a run listed, want at most 650", per)
	}
}

// The run list keeps one string for a value many runs share (a workspace,
// a provider, a status, an outcome, a parent's id), not a copy per run:
// on 100 k runs the copies were megabytes held for the whole session.
func TestRunsShareTheirRepeatedValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	const n = 2000
	// Every tenth run a root with nine children; a third left running.
	sqlite3(t, path, fmt.Sprintf(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < %d)
		INSERT INTO runs (id, goal, file, outcome, provider, parent_run_id, depth, status, started_at)
		SELECT i, 'goal ' || i, '/home/user/work/project', CASE WHEN i %% 3 = 0 THEN NULL ELSE 'success' END, 'anthropic',
			CASE WHEN (i-1) %% 10 = 0 THEN NULL ELSE i - (i-1) %% 10 END, CASE WHEN (i-1) %% 10 = 0 THEN 0 ELSE 1 END,
			CASE WHEN i %% 3 = 0 THEN 'running' ELSE 'completed' END,
			strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', '2025-01-01', '+' || i || ' minutes') FROM k;
		INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
		SELECT id, outcome, 1, 3, 300, 1000, started_at FROM runs WHERE outcome IS NOT NULL;`, n))
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != n {
		t.Fatalf("Runs: %d runs, %v", len(runs), err)
	}
	first := map[string]*byte{}
	same := func(what, v string) {
		if v == "" {
			return
		}
		p, ok := first[what+"="+v]
		if !ok {
			first[what+"="+v] = unsafe.StringData(v)
		} else if p != unsafe.StringData(v) {
			t.Errorf("two runs hold their own copies of %s %q", what, v)
		}
	}
	byID := map[string]string{}
	for _, r := range runs {
		byID[r.ID] = r.ID
	}
	shared := 0
	for _, r := range runs {
		same("workspace", r.Workspace)
		same("provider", r.Provider)
		same("status", string(r.Status))
		same("outcome", string(r.Outcome))
		if r.Summary != nil {
			same("outcome", string(r.Summary.Outcome))
		}
		if r.ParentID == "" {
			continue
		}
		if r.ParentID != byID[r.ParentID] {
			t.Fatalf("run %s's parent %s is not listed", r.ID, r.ParentID)
		}
		if unsafe.StringData(r.ParentID) == unsafe.StringData(byID[r.ParentID]) {
			shared++
		}
	}
	if t.Failed() {
		return
	}
	if want := n / 10 * 9; shared != want {
		t.Errorf("%d of %d children hold their parent's id as the parent's own string", shared, want)
	}
}
