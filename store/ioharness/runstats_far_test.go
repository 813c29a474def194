package ioharness_test

import (
	"context"
	"database/sql"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A run left unfinished far back in the table (its first step 60 000 rows
// before the end, past RunStats's backward chunks) is counted by the
// forward GROUP BY: its counts agree with C SQLite's own over the same
// rows, as do those of the recent run counted backwards.
func TestRunStatsOfARunFarBackAgreesWithSQLite(t *testing.T) {
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
	// Run 1 (crashed, no summary) writes a step among run 2's until row
	// 20 000, run 2 finishes; run 3 writes 60 000 steps after; run 4 is live.
	for _, q := range []string{"INSERT INTO runs (id, goal, file, status) VALUES (1, 'far', '/w', 'running')",
		"INSERT INTO runs (id, goal, file, status, outcome) VALUES (2, 'done', '/w', 'completed', 'success')",
		"INSERT INTO runs (id, goal, file, status, outcome) VALUES (3, 'done', '/w', 'completed', 'success')",
		"INSERT INTO runs (id, goal, file, status) VALUES (4, 'live', '/w', 'running')"} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := tx.Prepare("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (?, ?, 'd', 'r', ?)")
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := 0, 0
	for i := 0; i < 20_000; i++ {
		if i%3 == 0 {
			n1++
			ins.Exec(1, n1, 100+i%7)
		} else {
			n2++
			ins.Exec(2, n2, 50)
		}
	}
	for i := 1; i <= 60_000; i++ {
		ins.Exec(3, i, 10)
		if i > 59_000 {
			ins.Exec(4, i-59_000, 3+i%5)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.RunStats(ctx, []string{"1", "4"})
	if err != nil {
		t.Fatal(err)
	}
	want := sqliteStats(t, path)
	for _, id := range []string{"1", "4"} {
		if got[id].Steps != want[id][0] || got[id].Tokens != int64(want[id][1]) {
			t.Errorf("run %s: RunStats %d steps %d tokens, SQLite's GROUP BY %d steps %d tokens",
				id, got[id].Steps, got[id].Tokens, want[id][0], want[id][1])
		}
	}
	if got["1"].Steps != n1 {
		t.Errorf("run 1 counted %d steps, it wrote %d", got["1"].Steps, n1)
	}
}

// sqliteStats is MAX(step) and SUM(tokens) by run as the sqlite3 CLI (C
// SQLite, another process) reads them, else as this process's driver does.
func sqliteStats(t *testing.T, path string) map[string][2]int {
	t.Helper()
	q := "SELECT run_id, MAX(step), SUM(tokens) FROM steps GROUP BY run_id"
	out := map[string][2]int{}
	if bin, err := exec.LookPath("sqlite3"); err == nil {
		b, err := exec.Command(bin, "-readonly", path, q).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Split(line, "|")
			steps, _ := strconv.Atoi(f[1])
			tokens, _ := strconv.Atoi(f[2])
			out[f[0]] = [2]int{steps, tokens}
		}
		return out
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var steps, tokens int
		rows.Scan(&id, &steps, &tokens)
		out[id] = [2]int{steps, tokens}
	}
	return out
}
