package ioharness

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// runsBothWays reads every run, one run, a tree and the newest page once
// on SQLite's own handle and once through database/sql.
func runsBothWays(t *testing.T, path string) (raw, viaSQL [4][]store.Run, rawErr, sqlErr [4]error) {
	t.Helper()
	type reads struct {
		got  [4][]store.Run
		errs [4]error
	}
	a, b := bothWays(t, path, &rawRunRows, func(s *Store) (r reads) {
		ctx := context.Background()
		r.got[0], r.errs[0] = s.Runs(ctx)
		if run, err := s.Run(ctx, "2"); err == nil {
			r.got[1] = []store.Run{run}
		} else {
			r.errs[1] = err
		}
		r.got[2], r.errs[2] = s.Tree(ctx, "1")
		r.got[3], _, r.errs[3] = s.RecentRuns(ctx, 3)
		return r
	})
	return a.got, b.got, a.errs, b.errs
}

// TestRawRunRowsAgree: run rows read on SQLite's handle are the runs
// database/sql reads, value for value (a REAL goal in Go's digits, not
// SQLite's), on rows python3's sqlite3 (a
// foreign writer) fills with every storage class in every column, and on
// a schema whose declared DATETIME has the driver parse times (the raw
// read leaves that to database/sql); a row neither can read fails both.
func TestRawRunRowsAgree(t *testing.T) {
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
		raw, viaSQL, rawErr, sqlErr := runsBothWays(t, c.path)
		for i := range raw {
			if (rawErr[i] == nil) != (sqlErr[i] == nil) || (rawErr[i] != nil && rawErr[i].Error() != sqlErr[i].Error()) {
				t.Errorf("%s read %d: raw error %v, database/sql error %v", filepath.Base(c.path), i, rawErr[i], sqlErr[i])
			}
			if !reflect.DeepEqual(raw[i], viaSQL[i]) {
				t.Errorf("%s read %d differs:\nraw %+v\nsql %+v", filepath.Base(c.path), i, raw[i], viaSQL[i])
			}
		}
		type sigRead struct {
			sigs map[int64]string
			err  error
		}
		ra, rb := bothWays(t, c.path, &rawRunRows, func(s *Store) (r sigRead) {
			r.sigs, r.err = s.runSigs(context.Background(), "")
			return r
		})
		sigs, sigErr := [2]map[int64]string{ra.sigs, rb.sigs}, [2]error{ra.err, rb.err}
		if !reflect.DeepEqual(sigs[0], sigs[1]) || (sigErr[0] == nil) != (sigErr[1] == nil) {
			t.Errorf("%s: run signatures differ: raw %v, %v; database/sql %v, %v", filepath.Base(c.path), sigs[0], sigErr[0], sigs[1], sigErr[1])
		}
		if c.wantErr != (rawErr[0] != nil) {
			t.Errorf("%s: Runs error %v, want an error: %t", filepath.Base(c.path), rawErr[0], c.wantErr)
		}
		if !c.wantErr && len(raw[0]) != c.n {
			t.Errorf("%s: %d runs, want %d", filepath.Base(c.path), len(raw[0]), c.n)
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
