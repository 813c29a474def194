//go:build unix

package bigrun

import (
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

func measure(t *testing.T, limit time.Duration, rss int64, args ...string) {
	t.Helper()
	if old := Old(); old != "" {
		r := RunWith(t, old, args...)
		t.Logf("old   %-16s %6.2fs (CPU %5.2fs)  %4d MB  exit %d", strings.Join(args[:len(args)-2], " "), r.Took.Seconds(), r.CPU.Seconds(), r.MaxRSS>>20, r.Code)
	}
	r := Run(t, args...)
	t.Logf("vigil %-16s %6.2fs (CPU %5.2fs)  %4d MB  exit %d", strings.Join(args[:len(args)-2], " "), r.Took.Seconds(), r.CPU.Seconds(), r.MaxRSS>>20, r.Code)
	if r.Code != 0 {
		t.Errorf("exit %d: %s", r.Code, r.Stderr)
	}
	if r.Took > limit || r.MaxRSS > rss {
		t.Errorf("vigil %s: %v, %d MB (bounds %v, %d MB)", strings.Join(args, " "), r.Took, r.MaxRSS>>20, limit, rss>>20)
	}
}

// TestBigTrees: a chain of 100 000 runs and a tree 100 000 wide: runs and
// show ROOT within a second each, the explorer's rows on screen within a
// second, each in at most 200 MB. (VIGIL_BIG=1; VIGIL_BIG_OLD=path/to/vigil
// measures that build beside this one.)
func TestBigTrees(t *testing.T) {
	Skip(t)
	for _, chain := range []bool{true, false} {
		p := Tree(t, 100_000, chain)
		t.Logf("%s", p)
		for _, args := range [][]string{{"runs"}, {"runs", "--json"}, {"show", "1"}, {"show", "1", "--json"}} {
			measure(t, time.Second, 200<<20, append(args, "--store", p)...)
		}
		if old := Old(); old != "" {
			first, hwm := ExploreWith(t, old, "goal 1", 2*time.Second, "--store", p)
			t.Logf("old   explorer: rows after %.2fs, %d MB", first.Seconds(), hwm>>20)
		}
		first, hwm := Explore(t, "goal 1", 2*time.Second, "--store", p)
		t.Logf("vigil explorer: rows after %.2fs, %d MB", first.Seconds(), hwm>>20)
		if first > time.Second || hwm > 200<<20 {
			t.Errorf("explorer: rows after %v, %d MB (bounds 1s, 200 MB)", first, hwm>>20)
		}
	}
}

// TestBigField: a step whose result is 200 MB: trace, show and the
// explorer in bounded memory. (VIGIL_BIG=1)
func TestBigField(t *testing.T) {
	Skip(t)
	dir := CacheDir(t, "field-200m")
	path := filepath.Join(dir, "runs.sqlite3")
	if _, err := os.Stat(path + ".done"); err != nil {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		if path, err = fixture.Build(dir); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String())
		if err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat(strings.Repeat("0123456789abcdef", 64)+"\n", 200<<20/1025)
		if _, err := db.Exec("UPDATE steps SET result = ? WHERE id = (SELECT MIN(id) FROM steps WHERE run_id = 1)", big); err != nil {
			t.Fatal(err)
		}
		db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		db.Close()
		os.WriteFile(path+".done", nil, 0o644)
	}
	// The trace writes the whole 200 MB; show and the explorer only its
	// head (the field is read a piece at a time, never whole).
	for _, args := range [][]string{{"trace", "1"}, {"trace", "1", "--raw"}} {
		measure(t, 10*time.Second, 200<<20, append(args, "--store", path)...)
	}
	for _, args := range [][]string{{"show", "1"}, {"show", "1", "--json"}} {
		measure(t, time.Second, 200<<20, append(args, "--store", path)...)
	}
	first, hwm := Explore(t, "Fix the flaky parser test", 2*time.Second, "--store", path, "--run", "1")
	t.Logf("explorer: rows after %.2fs, %d MB", first.Seconds(), hwm>>20)
	if first > 2*time.Second || hwm > 200<<20 {
		t.Errorf("explorer: rows after %v, %d MB", first, hwm>>20)
	}
}

// TestBigSideFields: a step whose ledger observation text, edit hunk,
// assembled context detail and a question's context event detail are
// 100 MB each (the io-harness columns outside steps a harness fills with a
// tool's output or a model's text: Store::record_observations,
// Store::record_edit, Store::record_context_event in src/state/trace.rs),
// written by python3's sqlite3: trace writes the details whole, show,
// show --json and the explorer read heads, each in bounded memory.
// (VIGIL_BIG=1)
func TestBigSideFields(t *testing.T) {
	Skip(t)
	dir := CacheDir(t, "side-100m")
	path := filepath.Join(dir, "runs.sqlite3")
	if _, err := os.Stat(path + ".done"); err != nil {
		os.Remove(path)
		out, err := exec.Command("python3", "-c", `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.executescript(open(sys.argv[2]).read())
big = lambda first: first + ("0123456789abcdef" * 64 + "\n") * ((100 << 20) // 1025)
db.execute("INSERT INTO runs (id, goal, file) VALUES (1, 'Side fields of a hundred megabytes', 'f.rs')")
db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, 1, 'read big.log', 'read it', 'p', '{}', 5)")
db.execute("INSERT INTO ledger_observations (run_id, step, kind, target, text) VALUES (1, 1, 'read', 'big.log', ?)", (big("OBS "),))
db.execute("INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed, hunk) VALUES (1, 1, 'edit_file', 'big.log', 1, 0, ?)", (big("@@ -1 +1 @@\n+"),))
db.execute("INSERT INTO context_events (run_id, step, kind, detail, est_tokens) VALUES (1, 1, 'assembled', ?, 10)", (big("carried="),))
db.execute("INSERT INTO context_events (run_id, step, kind, detail) VALUES (1, 1, 'question_asked', ?)", (big("Q: "),))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
`, path, "../../store/ioharness/internal/schema/schema.sql").CombinedOutput()
		if err != nil {
			t.Fatalf("python3: %v: %s", err, out)
		}
		os.WriteFile(path+".done", nil, 0o644)
	}
	r := Run(t, "trace", "1", "--raw", "--store", path)
	if old := Old(); old != "" {
		o := RunWith(t, old, "trace", "1", "--raw", "--store", path)
		t.Logf("old trace: %d bytes, exit %d", o.OutBytes, o.Code)
	}
	if r.Code != 0 || r.OutBytes < 2*100<<20-4<<10 { // both details whole
		t.Fatalf("trace wrote %d bytes, exit %d: %s", r.OutBytes, r.Code, r.Stderr)
	}
	for _, args := range [][]string{{"trace", "1"}, {"trace", "1", "--raw"}} {
		measure(t, 10*time.Second, 200<<20, append(args, "--store", path)...)
	}
	for _, args := range [][]string{{"show", "1"}, {"show", "1", "--json"}} {
		measure(t, 2*time.Second, 200<<20, append(args, "--store", path)...)
	}
	if old := Old(); old != "" {
		first, hwm := ExploreWith(t, old, "Observations (1)", 2*time.Second, "--store", path, "--run", "1")
		t.Logf("old   explorer: the step's detail after %.2fs, %d MB", first.Seconds(), hwm>>20)
	}
	first, hwm := Explore(t, "Observations (1)", 2*time.Second, "--store", path, "--run", "1")
	t.Logf("explorer: the step's detail after %.2fs, %d MB", first.Seconds(), hwm>>20)
	if hwm > 200<<20 {
		t.Errorf("explorer: %d MB", hwm>>20)
	}
}
