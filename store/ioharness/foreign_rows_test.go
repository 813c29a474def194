package ioharness

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// runReads reads every run, one run, a tree and the newest page.
func runReads(t *testing.T, path string) (got [4][]store.Run, errs [4]error) {
	t.Helper()
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	got[0], errs[0] = s.Runs(ctx)
	if run, err := s.Run(ctx, "2"); err == nil {
		got[1] = []store.Run{run}
	} else {
		errs[1] = err
	}
	got[2], errs[2] = s.Tree(ctx, "1")
	got[3], _, errs[3] = s.RecentRuns(ctx, 3)
	return got, errs
}

// TestForeignRunRows: run rows python3's sqlite3 (a foreign writer) fills
// with every storage class in every column are read, with their run
// signatures; on a schema whose declared DATETIME has the driver parse
// times, a bare date is a start; a REAL provider reads in Go's digits,
// not SQLite's; a row that cannot be read fails the list.
func TestForeignRunRows(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	dir := t.TempDir()
	good := filepath.Join(dir, "odd.sqlite3")
	s, err := harness.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	py(t, good, `
rows = [
 (1, 'root', '/w', None, 'p', None, 0, 'running', '2026-11-29T12:00:00.000Z', None),
 (2, 1e20, b'/w\x00bin', 'success', 7, 1, 1, 'completed', '2026-11-29 12:00:01', 'reply'),
 (3, 42, '', 'step_cap_reached', b'', '1', 1.0, 'completed', 'not a time', b'turn'),
 (4, 'nul\x00in goal', '/w', 'failed', '\u202eprov', 2, '2', 'failed', 1764417600, 2.5),
 (5, 'x' * 5000, '/other', None, None, 4.0, 2, 'paused', None, None),
 (6, 'é ü 𝄞', '/w', 'success', 'p', None, 0, 7, '2026-11-29T12:00:06.5Z', 'task'),
]
db.executemany("INSERT INTO runs (id, goal, file, outcome, provider, parent_run_id, depth, status, started_at, turn_kind) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
db.execute("INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at) VALUES (2, 'success', 1, 3, 40, 1200, '2026-11-29T12:00:09.000Z')")
db.execute("INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at) VALUES (6, 'success', '1', '7', 3.0, NULL, 'not a time')")
db.execute("INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at) VALUES (4, X'6661696c6564', 0, 1, 2, '15', CAST('2026-11-29T12:00:09.000Z' AS BLOB))")
`)
	bad := filepath.Join(dir, "bad.sqlite3")
	s, err = harness.Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	py(t, bad, `
db.execute("INSERT INTO runs (id, goal, file, depth, status, started_at) VALUES (1, 'a', '/w', 1.5, 'running', '2026-11-29T12:00:00.000Z')")
db.execute("INSERT INTO runs (id, goal, file, depth, status, started_at) VALUES (2, 'b', '/w', 0, 'running', '2026-11-29T12:00:00.000Z')")
`)
	dated := filepath.Join(dir, "dated.sqlite3")
	s, err = harness.Create(dated)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// The same table with started_at declared DATETIME: the driver turns
	// its text into time.Time, and the run's start reads from that (a bare
	// date is a start then, where io-harness's own text would not parse).
	py(t, dated, `
db.execute("PRAGMA writable_schema = ON")
sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
import re
sql2 = re.sub(r'started_at\s+TEXT', 'started_at DATETIME', sql, count=1)
assert sql2 != sql, sql
db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'runs'", (sql2,))
db.commit()
db.execute("PRAGMA writable_schema = OFF")
db.execute("INSERT INTO runs (id, goal, file, status, started_at) VALUES (1, 'a', '/w', 'running', '2026-11-29')")
db.execute("INSERT INTO runs (id, goal, file, parent_run_id, depth, status, started_at) VALUES (2, 'b', '/w', 1, 1, 'running', '2026-11-29T12:00:00.250+02:00')")
`)
	// Columns without affinity (a foreign schema declares no type) keep
	// REAL and INTEGER values as given: SQLite's text for 1e20 is
	// "1.0e+20", the driver's value reads as Go's "1e+20".
	loose := filepath.Join(dir, "loose.sqlite3")
	s, err = harness.Create(loose)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	py(t, loose, `
db.execute("PRAGMA writable_schema = ON")
sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
import re
sql2 = re.sub(r'goal\s+TEXT', 'goal BLOB', sql, count=1)
sql2 = re.sub(r'status\s+TEXT', 'status BLOB', sql2, count=1)
sql2 = re.sub(r'provider\s+TEXT', 'provider BLOB', sql2, count=1)
assert sql2.count('BLOB') >= 3, sql2
db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'runs'", (sql2,))
db.commit()
db.execute("PRAGMA writable_schema = OFF")
db.close()
db = sqlite3.connect(sys.argv[1])  # the new declared types hold from here
db.execute("INSERT INTO runs (id, goal, file, provider, status, started_at) VALUES (1, 1e20, '/w', 0.1 + 0.2, 'running', '2026-11-29T12:00:00.000Z')")
db.execute("INSERT INTO runs (id, goal, file, provider, parent_run_id, depth, status) VALUES (2, 7, '/w', 1e20, 1, 1, 12)")
`)
	for _, c := range []struct {
		path    string
		n       int
		wantErr bool
	}{{good, 6, false}, {bad, 2, true}, {dated, 2, false}, {loose, 2, false}} {
		got, errs := runReads(t, c.path)
		s, err := OpenReadOnly(c.path)
		if err != nil {
			t.Fatal(err)
		}
		sigs, sigErr := s.runSigs(context.Background(), nil, "")
		s.Close()
		if sigErr != nil || len(sigs) != c.n {
			t.Errorf("%s: %d run signatures, %v; want %d", filepath.Base(c.path), len(sigs), sigErr, c.n)
		}
		if c.wantErr != (errs[0] != nil) {
			t.Errorf("%s: Runs error %v, want an error: %t", filepath.Base(c.path), errs[0], c.wantErr)
		}
		if !c.wantErr && len(got[0]) != c.n {
			t.Errorf("%s: %d runs, want %d", filepath.Base(c.path), len(got[0]), c.n)
		}
		for i := 1; i < len(got) && !c.wantErr; i++ {
			if errs[i] != nil || len(got[i]) == 0 {
				t.Errorf("%s read %d: %d runs, %v", filepath.Base(c.path), i, len(got[i]), errs[i])
			}
		}
		byID := map[string]store.Run{}
		for _, r := range got[0] {
			byID[r.ID] = r
		}
		switch c.path {
		case dated:
			if byID["1"].StartedAt.IsZero() || byID["2"].StartedAt.IsZero() {
				t.Errorf("dated: starts %v, %v: the driver's times are starts", byID["1"].StartedAt, byID["2"].StartedAt)
			}
		case loose:
			if p := byID["2"].Provider; p != "1e+20" {
				t.Errorf("loose: a REAL provider reads %q, want Go's %q", p, "1e+20")
			}
		}
	}
}

func py(t *testing.T, path, body string) {
	t.Helper()
	script := "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n" + body + "\ndb.commit()\ndb.close()\n"
	if out, err := exec.Command("python3", "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
}
