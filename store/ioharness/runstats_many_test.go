package ioharness

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	sqlite "modernc.org/sqlite"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Counting thousands of unfinished runs far back (the explorer counts every
// crashed run of a 100 k-run store) names none of them in SQL: a statement
// holding tens of thousands of id literals stayed prepared in the
// statement cache, and its memory is SQLite's, outside the Go heap, for
// the rest of the session. The counts of the runs asked about still agree
// with C SQLite's GROUP BY, and runs not asked about are left out.
func TestRunStatsOfManyRunsNamesNoneInSQL(t *testing.T) {
	testkit.Tool(t, "sqlite3", "the sqlite3 shell writes the store and counts its steps")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	const runs, steps = 3000, 60_000
	// Every run left running (a crashed driver), its 20 steps spread over
	// the whole table: each run's first step is in the first 3 000 rows,
	// past the backward chunks, so all are counted by the forward pass.
	shell(t, path, fmt.Sprintf(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < %[1]d)
		INSERT INTO runs (id, goal, file, status) SELECT i, 'goal ' || i, '/w', 'running' FROM k;
		WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < %[2]d)
		INSERT INTO steps (run_id, step, decision, result, tokens)
		SELECT 1 + (i-1) %% %[1]d, 1 + (i-1) / %[1]d, 'd', 'r', i %% 7 FROM k;`, runs, steps))
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for i := 1; i <= runs; i++ {
		if i%3 != 0 { // two thousand asked about, a thousand not
			ids = append(ids, strconv.Itoa(i))
		}
	}
	got, err := s.RunStats(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(shell(t, path, "SELECT run_id, MAX(step), SUM(tokens) FROM steps WHERE run_id % 3 != 0 GROUP BY run_id"), "\n") {
		id, counts, _ := strings.Cut(line, "|")
		want[id] = counts
	}
	if len(got) != len(ids) || len(want) != len(ids) {
		t.Fatalf("RunStats counted %d runs and C SQLite %d, want the %d asked about", len(got), len(want), len(ids))
	}
	for id, st := range got {
		if c := fmt.Sprintf("%d|%d", st.Steps, st.Tokens); c != want[id] {
			t.Errorf("run %s: RunStats %s, C SQLite %s", id, c, want[id])
		}
	}
	if used := stmtMemory(t, s); used > 64<<10 {
		t.Errorf("the statements left prepared hold %d bytes of SQLite's memory, want at most 64 KiB", used)
	}
}

// stmtMemory is the memory SQLite holds for the statements prepared on
// the store's browsing connection (SQLITE_DBSTATUS_STMT_USED).
func stmtMemory(t *testing.T, s *Store) int {
	t.Helper()
	c, err := s.read.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var used int
	err = c.Raw(func(dc any) error {
		if u, ok := dc.(interface{ Unwrap() driver.Conn }); ok {
			dc = u.Unwrap()
		}
		st, ok := dc.(interface {
			Status(sqlite.DBStatusOp, bool) (int, int, error)
		})
		if !ok {
			return fmt.Errorf("%T has no Status", dc)
		}
		used, _, err = st.Status(sqlite.DBStatusStmtUsed, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

func shell(t *testing.T, path, q string) string {
	t.Helper()
	out, err := exec.Command("sqlite3", path, q).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %q: %v: %s", q, err, out)
	}
	return strings.TrimSpace(string(out))
}

// With thousands of runs open (crashed drivers), a refresh reads every run
// row up to the cursor's mark (naming them all in SQL cost more), and
// makes a signature only of the open ones: the signatures of the finished
// runs it passes over were garbage made as fast as the rows came, on the
// explorer's first refresh after its run list.
func TestChangesWithManyOpenRunsSignsOnlyThose(t *testing.T) {
	testkit.Tool(t, "sqlite3", "the sqlite3 shell writes the store and changes a run")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	const runs, open = 30_000, 1500
	// Every twentieth run left running, the others finished with a summary.
	shell(t, path, fmt.Sprintf(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM k WHERE i < %d)
		INSERT INTO runs (id, goal, file, provider, outcome, status, started_at)
		SELECT i, 'goal ' || i, '/w', 'anthropic', CASE WHEN i %% 20 = 0 THEN NULL ELSE 'success' END,
			CASE WHEN i %% 20 = 0 THEN 'running' ELSE 'completed' END,
			strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', '2025-01-01', '+' || i || ' minutes') FROM k;
		INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at)
		SELECT id, outcome, 1, 3, 300, 1000, started_at FROM runs WHERE outcome IS NOT NULL;`, runs))
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := cur.(*SQLCursor).open.Len(); n != open {
		t.Fatalf("the cursor follows %d open runs, want %d", n, open)
	}
	shell(t, path, "UPDATE runs SET status = 'paused' WHERE id = 20")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ch, _, err := s.Changes(ctx, cur)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != "20" || ch.Runs[0].Status != "paused" {
		t.Fatalf("Changes: %+v, want run 20 paused", ch.Runs)
	}
	per := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated a run row", per)
	if per > 250 {
		t.Errorf("a refresh allocates %.0f bytes a run row read, want at most 250", per)
	}
}
