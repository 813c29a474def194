package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// The shapes are built small here (the bench builds them at size once) and
// read back by the sqlite3 CLI: issue 30's shape as io-harness 0.66's
// Store::open leaves the schema (no index on steps.run_id), trees of ten,
// a third of the runs crashed (running, no lease, no summary), and the
// imported variant whose start order disagrees with its ids while the bench
// still knows which root the list shows first.
func TestIssue30ShapesAreBuiltAsSaid(t *testing.T) {
	sqlite := testkit.Tool(t, "sqlite3", "the shapes are read back by C SQLite")
	for _, s := range []shape{
		{Runs: 200, Steps: 2000, Crashed: 3, Tree: 10, Short: true},
		{Runs: 200, Steps: 2000, Crashed: 3, Tree: 10, Short: true, Imported: true},
	} {
		path := filepath.Join(t.TempDir(), s.file())
		if err := buildStore(path, s); err != nil {
			t.Fatal(err)
		}
		q := func(sql string) string {
			out, err := exec.Command(sqlite, "-readonly", path, sql).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v: %s", sql, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		if got := q("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'steps'"); got != "0" {
			t.Errorf("%s indexes on steps; io-harness 0.66 makes none", got)
		}
		want := map[string]string{
			"SELECT COUNT(*) FROM runs":                             "200",
			"SELECT COUNT(*) FROM steps":                            "2000",
			"SELECT COUNT(*) FROM runs WHERE parent_run_id IS NULL": "20",
			"SELECT COUNT(*) FROM runs r WHERE r.parent_run_id = ((r.id-1)/10)*10+1 OR r.id % 10 = 1":              "200",
			"SELECT COUNT(*) FROM runs WHERE status = 'running'":                                                   "66",
			"SELECT COUNT(*) FROM runs WHERE status = 'running' AND id IN (SELECT run_id FROM run_outcomes)":       "0",
			"SELECT COUNT(*) FROM run_outcomes":                                                                    "134",
			"SELECT COUNT(*) FROM run_leases":                                                                      "0",
			"SELECT COUNT(*) FROM pending_approvals":                                                               "0",
			"SELECT MIN(n) || ' ' || MAX(n) FROM (SELECT COUNT(*) n FROM steps GROUP BY run_id)":                   "10 10",
			"SELECT COUNT(*) FROM runs c JOIN runs p ON c.parent_run_id = p.id WHERE c.started_at <= p.started_at": "0",
		}
		for sql, v := range want {
			if got := q(sql); got != v {
				t.Errorf("%v: %s = %s, want %s", s.Imported, sql, got, v)
			}
		}
		newest := q("SELECT id FROM runs WHERE parent_run_id IS NULL ORDER BY started_at DESC LIMIT 1")
		if newest != strconv.Itoa(newestRoot(s)) {
			t.Errorf("imported %v: the newest root is %s, the bench waits for %d", s.Imported, newest, newestRoot(s))
		}
		disagree := q("SELECT COUNT(*) FROM runs a JOIN runs b ON b.id = a.id + 10 WHERE b.started_at < a.started_at")
		if s.Imported == (disagree == "0") {
			t.Errorf("imported %v: %s runs start after the run ten ids on", s.Imported, disagree)
		}
	}
}
