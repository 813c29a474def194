package ioharness_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// RunStats counts the committed steps whose provider reported no usage
// (tokens 0: run_from in src/run/step.rs, usage.map(total_tokens).unwrap_or(0))
// and not the retry, escalation and compaction rows io-harness writes with
// 0 under a step: read backwards for a recent run and by the forward
// GROUP BY for one far back.
func TestRunStatsCountsUnreportedSteps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	s, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO runs (id, goal, file, status) VALUES (1, 'far', '/w', 'running')",
		"INSERT INTO runs (id, goal, file, status, outcome) VALUES (2, 'filler', '/w', 'completed', 'success')",
		"INSERT INTO runs (id, goal, file, status) VALUES (3, 'recent', '/w', 'running')"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := tx.Prepare("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (?, ?, ?, 'r', ?)")
	if err != nil {
		t.Fatal(err)
	}
	// Each of runs 1 and 3: step 1 reported, a retry of step 2, step 2 not
	// reported, an escalation and a compaction row under step 3, step 3
	// not reported, step 4 reported.
	rows := func(run int) {
		for _, r := range []struct {
			step     int
			decision string
			tokens   int
		}{{1, "read a file", 120}, {2, "retry 1 after Timeout in 1s", 0}, {2, "no usage", 0},
			{3, "escalated after 3 failures", 0}, {3, "compacting after step 2", 0}, {3, "no usage again", 0}, {4, "wrote it", 80}} {
			if _, err := ins.Exec(run, r.step, r.decision, r.tokens); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows(1)
	for i := 1; i <= 40_000; i++ { // past RunStats's backward chunks
		ins.Exec(2, i, "d", 10)
	}
	rows(3)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.RunStats(ctx, []string{"1", "3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "3"} {
		if st := got[id]; st.Steps != 4 || st.Tokens != 200 || st.Unreported != 2 {
			t.Errorf("run %s: %d steps, %d tokens, %d unreported; want 4, 200 and 2", id, st.Steps, st.Tokens, st.Unreported)
		}
	}
}
