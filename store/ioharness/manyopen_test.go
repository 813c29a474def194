package ioharness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A store with more open runs than an id list names (a tree of 100 k
// running agents): the run list reads summaries in one pass merged with
// the rows, and a refresh reads every run's signature instead of naming
// each open run. What sqlite3 (C SQLite, another process) changes is told
// exactly: the run it finished, with its summary, and nothing else; the
// next refresh tells nothing.
func TestManyOpenRunsChangesAndSummaries(t *testing.T) {
	cli := foreign.SQLite3(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Run 1 is the root; 2…n its children; every fifth child has finished.
	n := 2 * manyIDs // 1 600 of them open
	cli.MustExec(t, path, fmt.Sprintf(`
		WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)
		INSERT INTO runs (id, goal, file, provider, parent_run_id, depth, status, started_at, outcome)
		SELECT i, 'goal ' || i, '/w', 'p', CASE WHEN i = 1 THEN NULL ELSE 1 END, CASE WHEN i = 1 THEN 0 ELSE 1 END,
			CASE WHEN i %% 5 = 0 THEN 'completed' ELSE 'running' END, '2026-11-29T12:00:00.000Z',
			CASE WHEN i %% 5 = 0 THEN 'success' END FROM k;
		INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
		SELECT id, 'success', 1, id %% 7, id * 3, 1000, '2026-11-29T12:05:00.000Z' FROM runs WHERE status = 'completed';`, n))

	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d runs, want %d", len(runs), n)
	}
	for _, r := range runs {
		id := runNum(r.ID)
		finished := id%5 == 0
		if (r.Summary != nil) != finished || !finished && r.StatsKnown {
			t.Fatalf("run %d (%s): summary %+v, counts known %t", id, r.Status, r.Summary, r.StatsKnown)
		}
		if finished && (r.Summary.Steps != int(id%7) || r.Tokens != id*3 || r.Summary.Duration.Seconds() != 1 || !r.Summary.Success) {
			t.Fatalf("run %d: summary %+v, tokens %d", id, r.Summary, r.Tokens)
		}
	}

	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const done = 1001 // open, and above manyIDs in the id order
	cli.MustExec(t, path, fmt.Sprintf(`BEGIN;
		UPDATE runs SET status = 'completed', outcome = 'max_steps' WHERE id = %d;
		INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
			VALUES (%d, 'max_steps', 0, 9, 99, 2000, '2026-11-29T12:09:00.000Z');
		UPDATE runs SET goal = 'a goal is not a signature' WHERE id = 7;
		COMMIT;`, done, done))
	ch, next, err := s.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, r := range ch.Runs {
		told = append(told, fmt.Sprintf("%s %s %s", r.ID, r.Status, r.Outcome))
	}
	if got := strings.Join(told, ", "); got != fmt.Sprintf("%d completed max_steps", done) {
		t.Fatalf("changes told runs [%s], want only run %d finished", got, done)
	}
	if sum := ch.Runs[0].Summary; sum == nil || sum.Steps != 9 || sum.Tokens != 99 || sum.Outcome != store.Outcome("max_steps") {
		t.Errorf("the finished run's summary %+v", sum)
	}
	if ch, _, err = s.Changes(ctx, next); err != nil || len(ch.Runs) != 0 {
		t.Errorf("a quiet refresh told %d runs (%v)", len(ch.Runs), err)
	}
}
