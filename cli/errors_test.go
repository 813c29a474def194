package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sqliteExec runs statements on a SQLite file through the driver the store
// registers.
func sqliteExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

func starweaverDB(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	sqliteExec(t, path,
		"CREATE TABLE starweaver_schema_migrations (id TEXT PRIMARY KEY, description TEXT NOT NULL, checksum TEXT, applied_at TEXT NOT NULL)",
		"INSERT INTO starweaver_schema_migrations VALUES ('20260605_000001_session_stream_store', 'x', NULL, '2026-07-13T08:59:59Z')")
}

func TestBadStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.sqlite3")
	writeFile(t, text, "these are notes, not a database\n")
	empty := filepath.Join(dir, "empty.sqlite3")
	writeFile(t, empty, "")
	other := filepath.Join(dir, "other.sqlite3")
	sqliteExec(t, other, "CREATE TABLE t (x)")
	newer := fixtureStore(t)
	sqliteExec(t, newer, "PRAGMA user_version = 8")
	sw := filepath.Join(dir, "sw", "starweaver.sqlite")
	starweaverDB(t, sw)
	lev := filepath.Join(dir, "leviath", "runs")
	writeFile(t, filepath.Join(lev, "lead-1785427200-3fa9c2d1e0b7", "run.lvr"), "LVR")
	holder := filepath.Join(dir, "holder")
	writeFile(t, filepath.Join(holder, "runs.sqlite3"), "x")

	for _, c := range []struct {
		name, path string
		says       []string
	}{
		{"missing", filepath.Join(dir, "nope.sqlite3"), []string{filepath.Join(dir, "nope.sqlite3") + ": no such file"}},
		{"text", text, []string{text + ": not a SQLite database"}},
		{"empty", empty, []string{empty + ": not a run store vigil reads: the file is empty"}},
		{"other SQLite", other, []string{other + ": not a run store vigil reads"}},
		{"directory", dir, []string{dir + ": is a directory, not a store file"}},
		{"directory holding a store", holder, []string{holder + ": is a directory", "did you mean " + filepath.Join(holder, "runs.sqlite3")}},
		{"newer format", newer, []string{newer + ": written in a newer format than vigil reads: io-harness store format 8, vigil reads up to 7"}},
		{"starweaver too old", sw, []string{sw + ": Starweaver database without migration 2"}},
		{"leviath run with a torn magic", lev, []string{lev + ": is a directory, not a store file"}},
	} {
		for _, args := range [][]string{{"runs", "--store", c.path}, {"show", "1", "--store", c.path}, {"approve", "1", "--store", c.path}} {
			r := newHarness(t).run(args...)
			if r.code != ExitError {
				t.Errorf("%s %v: exit %d, want 1 (%q)", c.name, args, r.code, r.stderr)
				continue
			}
			r.oneLine(t, c.says...)
			if r.stdout != "" {
				t.Errorf("%s: stdout %q", c.name, r.stdout)
			}
		}
	}
	// The explorer opens the same way, and says the same.
	r := newHarness(t).run(text)
	r.wantCode(t, ExitError)
	r.oneLine(t, "not a SQLite database")
	// A refused file is left as it was found: no -wal or -shm beside it.
	if _, err := os.Stat(newer + "-wal"); err == nil {
		t.Error("opening a newer store left a -wal file")
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	for _, args := range [][]string{
		{"--bogus"},
		{"runs", "--bogus"},
		{"runs", "extra"},
		{"show"},
		{"show", "1", "2"},
		{"tail"},
		{"tail", "4", "--poll", "soon"},
		{"diff", "1"},
		{"approve"},
		{"deny", "1", "2"},
		{"answer", "1"},
		{"revise"},
		{"trace"},
		{"demo", "extra"},
		{"demo", "--speed", "fast"},
		{"frobnicate"},
		{"rnus"},
		{p, "extra"},
		{p, "--store", p + "x"},
		{"show", "1", "--json", "--markdown"},
	} {
		r := newHarness(t).run(args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (stdout %q, stderr %q)", args, r.code, r.stdout, r.stderr)
			continue
		}
		r.oneLine(t, "(see 'vigil")
	}
	r := newHarness(t).run("rnus")
	r.oneLine(t, `unknown command "rnus"`, `did you mean "runs"?`)
	// A real command after the store is out of place, not unknown.
	r = newHarness(t).run(p, "tail", "1")
	r.oneLine(t, `"tail" is a command: it comes first, the store after --store (vigil tail … --store STORE)`)
}

// TestBadPoll: a negative --poll, or one too short to be an interval, is a
// usage error on every command that has the flag, before anything starts.
func TestBadPoll(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	for _, cmd := range [][]string{
		{p},
		{"demo"},
		{"tail", "4", "--store", p},
		{"otel", "--follow", "--endpoint", "http://127.0.0.1:1", "--store", p},
		{"agent", "--stdio", "--store", p},
		{"serve", "--listen", "127.0.0.1:0", "--store", p},
	} {
		for _, c := range []struct{ poll, says string }{
			{"1ns", "--poll 1ns: an interval below 10ms would read the store without pause"},
			{"9ms", "--poll 9ms: an interval below 10ms"},
			{"-1s", "--poll -1s: an interval cannot be negative (0, the default, uses file events)"},
		} {
			args := append(append([]string{}, cmd...), "--poll", c.poll)
			// A command that took the flag would run on: stop it.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			r := newHarness(t).runContext(ctx, args...)
			cancel()
			if r.code != ExitUsage {
				t.Errorf("%v: exit %d, want 2 (stdout %q, stderr %q)", args, r.code, r.stdout, r.stderr)
				continue
			}
			r.oneLine(t, c.says, "(see 'vigil")
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.run("--version")
	r.wantCode(t, 0)
	if !strings.HasPrefix(r.stdout, "vigil version ") || strings.TrimSpace(strings.TrimPrefix(r.stdout, "vigil version ")) == "" {
		t.Fatalf("--version printed %q", r.stdout)
	}
	r = h.run("--help")
	r.wantCode(t, 0)
	contains(t, r.stdout, "vigil [command] [PATH]", "runs", "show", "tail", "approve", "deny", "answer", "revise", "trace", "diff", "demo")
	for _, cmd := range []string{"runs", "show", "tail", "approve", "deny", "answer", "revise", "trace", "diff", "demo"} {
		r := h.run(cmd, "--help")
		r.wantCode(t, 0)
		contains(t, r.stdout, "vigil "+cmd, "--store")
	}
}

// TestVersionVar: a release build's version set by ldflags wins. Not
// parallel: it sets a package variable.
func TestVersionVar(t *testing.T) {
	old := Version
	Version = "v9.8.7"
	defer func() { Version = old }()
	r := newHarness(t).run("--version")
	r.wantCode(t, 0)
	contains(t, r.stdout, "vigil version v9.8.7")
}

// Discovery tests change the working directory: not parallel.

func TestDiscoveryNothingFound(t *testing.T) {
	t.Chdir(t.TempDir())
	h := newHarness(t)
	for _, args := range [][]string{{}, {"runs"}} {
		r := h.run(args...)
		r.wantCode(t, ExitError)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if lines[0] != "vigil: no run store found; looked in:" {
			t.Fatalf("first line %q", lines[0])
		}
		if !strings.HasPrefix(lines[len(lines)-1], "hint: run 'vigil demo'") || !strings.Contains(lines[len(lines)-1], "--store PATH") {
			t.Fatalf("last line %q", lines[len(lines)-1])
		}
		for _, place := range []string{"./runs.sqlite3", "./*.sqlite3", "$STARWEAVER_SESSION_DB", "./.starweaver/starweaver.sqlite",
			"~/.starweaver/starweaver.sqlite", "$LEVIATH_RUNS_DIR", "~/.leviath/runs"} {
			found := false
			for _, l := range lines[1 : len(lines)-1] {
				found = found || strings.HasPrefix(strings.TrimSpace(l), place+" ")
			}
			if !found {
				t.Errorf("no line for %s:\n%s", place, r.stderr)
			}
		}
	}
}

func TestDiscoveryFinds(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	p := fixtureStore(t)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Not runs.sqlite3: the newest io-harness store among ./*.sqlite3.
	writeFile(t, "zz-notes.sqlite3", "not a store")
	if err := os.WriteFile("b.sqlite3", data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	r := h.run("runs", "--json")
	r.wantCode(t, 0)
	contains(t, r.stdout, filepath.Join(dir, "b.sqlite3"))

	// ./runs.sqlite3 comes first.
	if err := os.WriteFile("runs.sqlite3", data, 0o644); err != nil {
		t.Fatal(err)
	}
	r = h.run("runs", "--json")
	contains(t, r.stdout, filepath.Join(dir, "runs.sqlite3"))

	// $VIGIL_STORE before discovery, --store before $VIGIL_STORE.
	h.env = append(h.env, "VIGIL_STORE="+p)
	r = h.run("runs", "--json")
	contains(t, r.stdout, `"path": "`+p+`"`)
	r = h.run("runs", "--json", "--store", "b.sqlite3")
	contains(t, r.stdout, filepath.Join(dir, "b.sqlite3"))
}

func TestDiscoveryOtherFormats(t *testing.T) {
	t.Chdir(t.TempDir())
	h := newHarness(t)
	home := strings.TrimPrefix(h.env[0], "HOME=")

	// A Leviath runs directory in its usual place opens through its adapter.
	lev := filepath.Join(home, ".leviath", "runs")
	leviathRun(t, lev, "lead-1785427200-3fa9c2d1e0b7", "Coordinate the 2.4.0 release")
	r := h.run("runs")
	r.wantCode(t, 0)
	contains(t, r.stdout, "Coordinate the 2.4.0 release")

	// Starweaver's place is looked at first; one too old to read says so.
	sw := filepath.Join(home, ".starweaver", "starweaver.sqlite")
	starweaverDB(t, sw)
	r = h.run("runs")
	r.wantCode(t, ExitError)
	r.oneLine(t, sw+": Starweaver database without migration 2")

	other := filepath.Join(t.TempDir(), "session.db")
	starweaverDB(t, other)
	h.env = append(h.env, "STARWEAVER_SESSION_DB="+other)
	r = h.run("runs")
	r.oneLine(t, other+": Starweaver database without migration 2")
}

// leviathRun writes a minimal finished Leviath run: meta.json and a run.lvr
// holding one Header frame (magic, u16 version, u64 length, JSON).
func leviathRun(t *testing.T, runs, id, task string) {
	t.Helper()
	dir := filepath.Join(runs, id)
	meta := fmt.Sprintf(`{"run_id":%q,"agent_name":"lead","task":%q,"status":"complete","pid":0,
		"started_at":1785427200,"updated_at":1785427260,"children":[],"depth":0}`, id, task)
	writeFile(t, filepath.Join(dir, "meta.json"), meta)
	frame := fmt.Sprintf(`{"Header":{"identity":{"run_id":%q,"machine_id":"m","world_id":"w","created_at":1785427200},"meta":%s}}`, id, meta)
	var b bytes.Buffer
	b.WriteString("LVR1")
	binary.Write(&b, binary.BigEndian, uint16(1))
	binary.Write(&b, binary.BigEndian, uint64(len(frame)))
	b.WriteString(frame)
	writeFile(t, filepath.Join(dir, "run.lvr"), b.String())
}

// A command stuck in a read the kernel will not interrupt is left behind
// once it has had stopGrace after the signal: the process still exits
// within a second.
func TestStopWithinASecond(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var errb strings.Builder
	stuck := make(chan struct{})
	defer close(stuck)
	got := make(chan int, 1)
	go func() {
		got <- runUntilStopped(ctx, cancel, &errb, func(context.Context) int { <-stuck; return 0 })
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case code := <-got:
		if took := time.Since(start); took > time.Second || code != ExitError {
			t.Fatalf("exit %d after %v", code, took)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a stuck command kept the process from exiting")
	}
	if !strings.Contains(errb.String(), "stopped by a signal") {
		t.Errorf("stderr: %q", errb.String())
	}
	// A command that stops on the signal gives its own code.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if code := runUntilStopped(ctx2, cancel2, &errb, func(ctx context.Context) int { <-ctx.Done(); return 0 }); code != 0 {
		t.Errorf("exit %d", code)
	}
}
