package ioharness

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// zoneSteps is run 1's length in zoneStore: its steps rows span more than
// zoneMinSpan ids, so a step's side rows are read by blocks.
const zoneSteps = 36_000

// python3 runs a script on the store as a foreign writer.
func python3(t *testing.T, path, script string, args ...string) {
	t.Helper()
	out, err := exec.Command("python3", append([]string{"-c", script, path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v: %s", err, out)
	}
}

// zoneStore has python3's sqlite3 write run 1 of zoneSteps steps as
// io-harness does, step by step, each with an observation, a policy event
// and a provider attempt (an edit every seventh step), interleaved with
// run 2's rows; then a resume's late rows under old steps, at the end of
// every table.
func zoneStore(t *testing.T) string {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.executescript(open(sys.argv[2]).read())
db.execute("INSERT INTO runs (id, goal, file) VALUES (1, 'long', 'f'), (2, 'other', 'f')")
def step(run, n):
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (?, ?, 1, 'p', 5)", (run, n))
    db.execute("INSERT INTO steps (run_id, step, decision, result) VALUES (?, ?, 'read', 'ok')", (run, n))
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (?, ?, 'read', 'seen')", (run, n))
    db.execute("INSERT INTO policy_events (run_id, step, kind, act, target) VALUES (?, ?, 'decision', 'read', 'a')", (run, n))
    if n % 7 == 0:
        db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed) VALUES (?, ?, 'e', 'a', 1, 0)", (run, n))
for n in range(1, int(sys.argv[3]) + 1):
    step(1, n)
    if n % 10 == 0:
        step(2, n // 10)
# A resume writes late rows under old steps.
for n in (5, 7, 4000):
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'error', 'late')", (n,))
    db.execute("INSERT INTO policy_events (run_id, step, kind, act, target) VALUES (1, ?, 'refusal', 'write', 'late')", (n,))
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (1, ?, 2, 'p', 5)", (n,))
    db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed) VALUES (1, ?, 'e', 'late', 1, 0)", (n,))
db.commit()
`, filepath.Join("internal", "schema", "schema.sql"), strconv.Itoa(zoneSteps))
	return path
}

// checkSteps compares each step's side rows in its detail with what a
// plain "WHERE run_id = 1 AND step = ?" finds, row for row. The plain
// queries are Python's sqlite3's (C SQLite, a process of its own), all of
// a call's in one process: every one scans a whole table (the schema has
// no index on run_id or step).
func checkSteps(t *testing.T, s *Store, steps ...int) {
	t.Helper()
	ctx := context.Background()
	want := plainStepRows(t, s.path, steps)
	for i, n := range steps {
		d, err := s.StepDetail(ctx, "1", want[i].Row)
		if err != nil {
			t.Fatal(err)
		}
		var got = map[string][]int64{}
		for _, o := range d.Observations {
			got["ledger_observations"] = append(got["ledger_observations"], o.RowID)
		}
		for _, e := range d.Edits {
			got["edits"] = append(got["edits"], e.RowID)
		}
		for _, p := range d.Policy {
			got["policy_events"] = append(got["policy_events"], p.RowID)
		}
		for _, c := range d.ProviderCalls {
			got["provider_calls"] = append(got["provider_calls"], c.RowID)
		}
		for _, table := range sideTables {
			if !slices.Equal(got[table], want[i].Side[table]) {
				t.Errorf("step %d, %s: rows %v, want %v", n, table, got[table], want[i].Side[table])
			}
		}
	}
}

var sideTables = []string{"ledger_observations", "edits", "policy_events", "provider_calls"}

// stepRows is one step of run 1 as plain queries find it: its steps row
// and its rows in each side table, by id.
type stepRows struct {
	Row  int64
	Side map[string][]int64
}

// plainStepRows has Python's sqlite3 read, read-only, each step's steps
// row and side rows of run 1 with plain queries.
func plainStepRows(t *testing.T, path string, steps []int) []stepRows {
	t.Helper()
	arg, _ := json.Marshal(steps)
	tables, _ := json.Marshal(sideTables)
	cmd := exec.Command("python3", "-c", `
import json, sqlite3, sys, urllib.parse
db = sqlite3.connect("file:" + urllib.parse.quote(sys.argv[1]) + "?mode=ro", uri=True)
out = []
for n in json.loads(sys.argv[2]):
    row = db.execute("SELECT id FROM steps WHERE run_id = 1 AND step = ?", (n,)).fetchone()
    side = {t: [i for (i,) in db.execute(f"SELECT id FROM {t} WHERE run_id = 1 AND step = ? ORDER BY id", (n,))]
            for t in json.loads(sys.argv[3])}
    out.append({"Row": row[0] if row else None, "Side": side})
print(json.dumps(out))
`, path, string(arg), string(tables))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v: %s", err, stderr.String())
	}
	var rows []stepRows
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Row == 0 {
			t.Fatalf("step %d: no steps row", steps[i])
		}
	}
	return rows
}

// A step's side rows are read from the blocks that may hold it, and that
// misses none: not a resume's late rows under old steps, not rows written
// after what was learned, not rows written over ids a rewind deleted.
func TestStepZonesAreExact(t *testing.T) {
	path := zoneStore(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	checkSteps(t, s, 1, 5, 7, 4000, 6000, zoneSteps)

	// The read is bounded: an ordinary step's rows lie in a block or
	// two, not the run's whole span.
	for _, table := range []string{"ledger_observations", "policy_events", "provider_calls"} {
		ranges, ok, err := s.stepRanges(ctx, table, 1, 6000, 0)
		var ids int64
		for _, r := range ranges {
			ids += r.last - r.first + 1
		}
		if err != nil || !ok || ids > 2<<zoneShift {
			t.Errorf("%s: step 6000 reads %d ids in %d ranges (%v, %v)", table, ids, len(ranges), ok, err)
		}
	}

	// New steps, and late rows for old ones, after the blocks were learned.
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for n in (6000, 5):
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'error', 'later')", (n,))
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (1, ?, 3, 'p', 5)", (n,))
for n in range(36001, 36100):
    db.execute("INSERT INTO steps (run_id, step, decision, result) VALUES (1, ?, 'read', 'ok')", (n,))
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'read', 'new')", (n,))
db.commit()
`)
	checkSteps(t, s, 5, 6000, 36050)

	// A rewind deletes the newest rows; new ones take their ids
	// (ledger_observations' ids are not AUTOINCREMENT) under other steps.
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
top = db.execute("SELECT MAX(id) FROM ledger_observations").fetchone()[0]
db.execute("DELETE FROM ledger_observations WHERE id > ?", (top - 150,))
for n in (3, 9000, 36050):
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'read', 'after rewind')", (n,))
db.commit()
`)
	checkSteps(t, s, 3, 5, 6000, 9000, 36050)

	// New steps whose rows fill fresh blocks, each of a narrow range of
	// steps, learned by a read.
	python3(t, path, zoneStepsScript, "36100", "44300")
	checkSteps(t, s, 3, 36200, 44000)

	// A foreign writer deletes the newest rows and writes them again
	// under the same ids, the steps spread differently, ending on a row
	// of the run and step the old last row had: ledger_observations hands
	// the ids out again by itself (no AUTOINCREMENT), the other tables are
	// given them. The rewritten rows' steps lie outside every range
	// learned for their blocks.
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for table, cols, vals, explicit in (
        ("ledger_observations", "kind, text", "'read', 'rewritten'", False),
        ("provider_calls", "attempt, provider, latency_ms", "7, 'p', 5", True),
        ("policy_events", "kind, act, target", "'decision', 'read', 'rewritten'", True)):
    top = db.execute(f"SELECT MAX(id) FROM {table}").fetchone()[0]
    run, step = db.execute(f"SELECT run_id, step FROM {table} WHERE id = ?", (top,)).fetchone()
    db.execute(f"DELETE FROM {table} WHERE id > ?", (top - 300,))
    for i, id in enumerate(range(top - 299, top + 1)):
        r, n = (run, step) if id == top else (1, (3, 9000, 20000)[i % 3])
        if explicit:
            db.execute(f"INSERT INTO {table} (id, run_id, step, {cols}) VALUES (?, ?, ?, {vals})", (id, r, n))
        else:
            db.execute(f"INSERT INTO {table} (run_id, step, {cols}) VALUES (?, ?, {vals})", (r, n))
    assert db.execute(f"SELECT MAX(id) FROM {table}").fetchone()[0] == top
db.commit()
`)
	checkSteps(t, s, 3, 9000, 20000, 44299)

	// A session whose run wrote the newest rows of every table is deleted
	// the way io-harness deletes one (sessions.rs, Store::prune_counted:
	// each run table by run_id IN the session's runs, then runs,
	// session_turns, sessions). Then run 1 writes on, under ids the deleted
	// rows had, and the run after it too.
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO runs (id, goal, file) VALUES (3, 'in a session', 'f')")
db.execute("INSERT INTO sessions (id, root) VALUES (1, '/repo')")
db.execute("INSERT INTO session_turns (session_id, run_id, prompt) VALUES (1, 3, 'go')")
for n in range(1, 400):
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (3, ?, 'read', 'session')", (n,))
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (3, ?, 1, 'p', 5)", (n,))
    db.execute("INSERT INTO policy_events (run_id, step, kind, act, target) VALUES (3, ?, 'decision', 'read', 'session')", (n,))
    db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed) VALUES (3, ?, 'e', 'session', 1, 0)", (n,))
db.commit()
`)
	checkSteps(t, s, 5, 44000)
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs = [r for (r,) in db.execute("""WITH RECURSIVE tree(id) AS (
    SELECT run_id FROM session_turns WHERE session_id IN (1)
    UNION SELECT r.id FROM runs r JOIN tree t ON r.parent_run_id = t.id) SELECT id FROM tree ORDER BY id""")]
run_list = ", ".join(map(str, runs))
tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
for table, key in (("steps", "run_id"), ("policy_events", "run_id"), ("context_events", "run_id"),
        ("ledger_observations", "run_id"), ("provider_calls", "run_id"), ("edits", "run_id"),
        ("citations", "run_id"), ("server_tool_calls", "run_id"), ("step_turns", "run_id")):
    if table in tables:
        db.execute(f"DELETE FROM {table} WHERE {key} IN ({run_list})")
db.execute(f"DELETE FROM runs WHERE id IN ({run_list})")
db.execute("DELETE FROM session_turns WHERE session_id IN (1)")
db.execute("DELETE FROM sessions WHERE id IN (1)")
db.commit()
db.execute("INSERT INTO runs (goal, file) VALUES ('after', 'f')")
for i in range(600):
    n = (4, 12000, 30000, 44100)[i % 4]
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'read', 'after the session')", (n,))
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (1, ?, 9, 'p', 5)", (n,))
    db.execute("INSERT INTO policy_events (run_id, step, kind, act, target) VALUES (1, ?, 'decision', 'read', 'after')", (n,))
    db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed) VALUES (1, ?, 'e', 'after', 1, 0)", (n,))
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (4, ?, 'read', 'next run')", (n,))
db.commit()
`)
	checkSteps(t, s, 4, 12000, 30000, 44100, 44000)

	// Rows of the run deleted from the middle of a table, and appends
	// after: a step reads what is left.
	python3(t, path, `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM ledger_observations WHERE run_id = 1 AND step BETWEEN 100 AND 120")
db.execute("DELETE FROM policy_events WHERE run_id = 1 AND id % 3 = 0")
db.commit()
`)
	python3(t, path, zoneStepsScript, "44300", "44400")
	checkSteps(t, s, 3, 110, 9000, 12000, 20000, 44350)

	// The handle's view agrees with a fresh one's.
	fresh, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	checkSteps(t, fresh, 3, 110, 9000, 12000, 20000, 36050, 44299, 44350)
}

// zoneStepsScript appends run 1's steps argv[2] to argv[3] (exclusive), each
// with an observation, a provider attempt and a policy event.
const zoneStepsScript = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for n in range(int(sys.argv[2]), int(sys.argv[3])):
    db.execute("INSERT INTO steps (run_id, step, decision, result) VALUES (1, ?, 'read', 'ok')", (n,))
    db.execute("INSERT INTO ledger_observations (run_id, step, kind, text) VALUES (1, ?, 'read', 'new')", (n,))
    db.execute("INSERT INTO provider_calls (run_id, step, attempt, provider, latency_ms) VALUES (1, ?, 1, 'p', 5)", (n,))
    db.execute("INSERT INTO policy_events (run_id, step, kind, act, target) VALUES (1, ?, 'decision', 'read', 'new')", (n,))
db.commit()
`
