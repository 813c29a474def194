package starweaver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// listDir names the files in a directory, to tell that nothing appeared.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputs(t *testing.T) {
	good := buildV07(t, t.TempDir())
	base := t.TempDir()
	n := 0
	// Each case gets a directory of its own, so the test can tell that a
	// refusal leaves the file (and its directory) exactly as they were.
	mk := func(build func(path string)) string {
		n++
		dir := filepath.Join(base, string(rune('a'+n)))
		os.Mkdir(dir, 0o755)
		p := filepath.Join(dir, "starweaver.sqlite")
		build(p)
		return p
	}
	sqlExec := func(p string, qs ...string) {
		db, err := sql.Open("sqlite", sqlitex.DSN(p, ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	random := make([]byte, 8192)
	rand.Read(random)
	cases := []struct {
		name string
		path string
		kind error
		msg  string
	}{
		{"missing", filepath.Join(base, "nope.sqlite"), store.ErrNotFound, "no such file"},
		{"directory", base, store.ErrIsDirectory, "is a directory"},
		{"empty", mk(func(p string) { os.WriteFile(p, nil, 0o644) }), store.ErrNotAStore, "not a Starweaver session database: the file is empty"},
		{"not sqlite", mk(func(p string) { os.WriteFile(p, random, 0o644) }), store.ErrNotSQLite, "not a SQLite database"},
		{"text", mk(func(p string) { os.WriteFile(p, []byte("hello\n"), 0o644) }), store.ErrNotSQLite, "not a SQLite database"},
		{"truncated", mk(func(p string) {
			b, _ := os.ReadFile(good)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}), store.ErrCorrupt, "truncated"},
		{"plain sqlite", mk(func(p string) { sqlExec(p, "CREATE TABLE runs (id INTEGER PRIMARY KEY)") }), store.ErrNotAStore,
			"not a Starweaver session database: SQLite, but without the starweaver_schema_migrations table"},
		{"newer migration", mk(func(p string) {
			copyFile(t, good, p)
			sqlExec(p, "INSERT INTO starweaver_schema_migrations VALUES ('20260801_000020_future', 'future', 'fnv1a64:0', '2026-08-01T00:00:00+00:00')")
		}), store.ErrNewerFormat, "written by a newer Starweaver: migration 20 (20260801_000020_future), vigil reads up to 19 (0.15.0); upgrade vigil"},
		{"unknown migration", mk(func(p string) {
			copyFile(t, good, p)
			sqlExec(p, "INSERT INTO starweaver_schema_migrations VALUES ('fork-migration', 'x', NULL, '2026-08-01T00:00:00+00:00')")
		}), store.ErrNewerFormat, `unknown migration "fork-migration"`},
		{"renamed migration", mk(func(p string) {
			copyFile(t, good, p)
			sqlExec(p, "UPDATE starweaver_schema_migrations SET id = '20260712_000004_other' WHERE id LIKE '%000004%'")
		}), store.ErrNewerFormat, "vigil knows migration 4 as 20260712_000004_evidence_outbox_and_resume_claims"},
		{"before 0.7", mk(func(p string) {
			sqlExec(p, "CREATE TABLE starweaver_schema_migrations (id TEXT PRIMARY KEY, description TEXT NOT NULL, checksum TEXT, applied_at TEXT NOT NULL)",
				"INSERT INTO starweaver_schema_migrations VALUES ('20260605_000001_session_stream_store', 'x', NULL, '2026-06-05T00:00:00+00:00')",
				migrationSQL[0])
		}), store.ErrUnsupported, "without migration 2"},
		{"table missing", mk(func(p string) {
			copyFile(t, good, p)
			sqlExec(p, "DROP TABLE hitl_resume_claims")
		}), store.ErrCorrupt, "the hitl_resume_claims table is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before []byte
			var files string
			if fi, err := os.Stat(c.path); err == nil && !fi.IsDir() {
				before, _ = os.ReadFile(c.path)
				files = listDir(t, filepath.Dir(c.path))
			}
			s, err := Open(c.path)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v is not %v", err, c.kind)
			}
			var e *store.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not a *store.Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, c.msg) || strings.Contains(msg, "io-harness") {
				t.Fatalf("message %q, want it to say %q", msg, c.msg)
			}
			if before != nil {
				after, _ := os.ReadFile(c.path)
				if string(after) != string(before) {
					t.Fatal("the refused file changed")
				}
				if got := listDir(t, filepath.Dir(c.path)); got != files {
					t.Fatalf("files beside it changed: %s → %s", files, got)
				}
			}
			if Detect(c.path) && c.kind != store.ErrNewerFormat && c.kind != store.ErrUnsupported && c.kind != store.ErrCorrupt {
				t.Error("Detect true")
			}
		})
	}
}

func TestDetect(t *testing.T) {
	v07 := buildV07(t, t.TempDir())
	v015 := buildV015(t, t.TempDir())
	for _, p := range []string{v07, v015} {
		before := listDir(t, filepath.Dir(p))
		if !Detect(p) {
			t.Errorf("Detect(%s) false", p)
		}
		if listDir(t, filepath.Dir(p)) != before {
			t.Error("Detect left files behind")
		}
	}
	dir := t.TempDir()
	hs, err := harness.Create(filepath.Join(dir, "runs.sqlite3"))
	if err != nil {
		t.Fatal(err)
	}
	hs.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("SQLite format 3"), 0o644)
	for _, p := range []string{filepath.Join(dir, "runs.sqlite3"), filepath.Join(dir, "notes.txt"), filepath.Join(dir, "nope"), dir} {
		if Detect(p) {
			t.Errorf("Detect(%s) true", p)
		}
	}
	if _, err := Open(filepath.Join(dir, "runs.sqlite3")); !errors.Is(err, store.ErrNotAStore) {
		t.Errorf("an io-harness store: %v", err)
	}
}

// A full browse — every read the explorer and the CLI make — leaves the
// database file byte-identical.
func TestBrowseWritesNothing(t *testing.T) {
	for name, build := range map[string]func(testing.TB, string) string{"0.7": buildV07, "0.15": buildV015} {
		t.Run(name, func(t *testing.T) {
			path := build(t, t.TempDir())
			sum := fileSum(t, path)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cur, err := s.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
				steps, err := s.Steps(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, st := range steps {
					if _, err := s.StepDetail(ctx, r.ID, st.RowID); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.ContextSamples(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := s.ProviderCalls(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.RunStats(ctx, ids); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AgentEvents(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			reqs, err := s.Requests(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			byRun := byID(t, runs)
			for _, r := range reqs {
				s.Classify(r, byRun[r.RunID], nil, t0)
			}
			if _, _, err := s.Changes(ctx, cur); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Watch().Version(); err != nil {
				t.Fatal(err)
			}
			if s.write.Opened() {
				t.Error("browsing opened the writing connection")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if fileSum(t, path) != sum {
				t.Fatal("browsing changed the database file")
			}
			// The journal mode is Starweaver's still.
			db, _ := sql.Open("sqlite", sqlitex.DSN(path, "mode=ro"))
			defer db.Close()
			var mode string
			db.QueryRow("PRAGMA journal_mode").Scan(&mode)
			if mode != "wal" {
				t.Errorf("journal mode %s", mode)
			}
		})
	}
}

func TestWatch(t *testing.T) {
	s, path := openV07(t)
	w := s.Watch()
	if w.Path != path || strings.Join(w.Names, ",") != "starweaver.sqlite,starweaver.sqlite-wal,starweaver.sqlite-journal" {
		t.Fatalf("watch spec %+v", w)
	}
	v1, err := w.Version()
	if err != nil {
		t.Fatal(err)
	}
	if v2, _ := w.Version(); v2 != v1 {
		t.Fatal("data_version moved without a commit")
	}
	f := writerFx(t, path)
	f.exec("UPDATE session_records SET updated_at = '2026-07-13T12:00:00+00:00' WHERE session_id = ?", sessC)
	if v3, _ := w.Version(); v3 == v1 {
		t.Fatal("data_version did not move after another connection committed")
	}
}

// A path with URI metacharacters cannot cut the query off (a lost mode=ro
// would create a file).
func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a#b?c%d")
	os.Mkdir(dir, 0o755)
	path := buildV07(t, dir)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, err := s.Runs(context.Background()); err != nil || len(runs) != 9 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if _, err := Open(filepath.Join(dir, "missing#x.sqlite")); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing#x.sqlite")); err == nil {
		t.Fatal("a missing file was created")
	}
}
