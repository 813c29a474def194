package ioharness

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// record_observations writes each entry under its own step: the seeded
// conversation at step 0 and a step's own observations, committed together.
func TestObservationsKeepTheirSteps(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "observe", "/repo"))
	if err := s.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read a", Result: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordObservations(ctx, run, []store.Observation{
		{Step: 0, Kind: "message", Text: "[you] earlier turn"},
		{Step: 1, Kind: "read", Target: "a", Text: "[read a]"},
	}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, s.Path())
	var got []string
	rows, err := db.Query("SELECT step, kind FROM ledger_observations WHERE run_id = ? ORDER BY id", run)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var step int
		var kind string
		rows.Scan(&step, &kind)
		got = append(got, fmt.Sprintf("%d:%s", step, kind))
	}
	rows.Close()
	if strings.Join(got, " ") != "0:message 1:read" {
		t.Fatalf("ledger = %v", got)
	}
	steps := must[[]store.Step](t)(s.Steps(ctx, run))
	d := must[store.StepDetail](t)(s.StepDetail(ctx, run, steps[0].RowID))
	if len(d.Observations) != 1 || d.Observations[0].Kind != "read" || d.Observations[0].Step != 1 {
		t.Errorf("step 1's observations = %+v", d.Observations)
	}
}

// copyFixture copies an io-harness fixture store (with its WAL sidecars).
func copyFixture(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(testkit.IOHarnessFixtures(t), rel)
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			if suffix == "" {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// schemaDump is every table's columns (name, type, not null, default) and
// every index, as the sqlite3 CLI reports them: the foreign party's view of
// a schema.
func schemaDump(t *testing.T, path string) string {
	t.Helper()
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	out, err := exec.Command("sqlite3", path,
		`SELECT m.name || '.' || p.cid || ' ' || p.name || ' ' || p.type || ' ' || p."notnull" || ' ' || COALESCE(p.dflt_value, '-') || ' ' || p.pk
		 FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name != 'sqlite_sequence' ORDER BY m.name, p.cid;
		 SELECT 'index ' || name || ' ' || tbl_name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name;
		 PRAGMA user_version;`).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	return string(out)
}

// OpenWriter on a 0.22 or 0.29 store migrates it as io-harness's
// Store::open does (from_conn, src/state/schema.rs): afterwards it has the
// fresh store's tables, columns (in the same order) and indexes, every
// write the API makes lands, and the rows it had are still read.
func TestOpenWriterMigratesOldStores(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "fresh.sqlite3")
	f, err := harness.Create(fresh)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := schemaDump(t, fresh)
	for _, rel := range []string{"store-0.22.0/populated.sqlite3", "store-0.22.0/deferred-approval.sqlite3", "store-0.29.0/aggregates.sqlite3"} {
		t.Run(rel, func(t *testing.T) {
			path := copyFixture(t, rel)
			// Closed before the writer opens: an open reads the file's header
			// through a descriptor of its own, and closing it drops every
			// POSIX lock this process holds on the file, another handle's
			// included (then the sqlite3 CLI below, finding no other
			// connection, checkpoints and deletes the -shm under it).
			r1, err := OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			before := must[[]store.Run](t)(r1.Runs(context.Background()))
			r1.Close()
			w, err := harness.OpenWriter(path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if got := schemaDump(t, path); got != want {
				t.Fatalf("migrated schema differs from a fresh one:\n%s", lineDiff(want, got))
			}
			ctx := context.Background()
			run := must[string](t)(w.StartRun(ctx, "after the upgrade", "/w"))
			must[int64](t)(w.AcquireLease(ctx, run, harness.DefaultLeaseTTL))
			if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "d", Result: "r", Turn: &harness.Turn{Calls: []harness.ToolCall{{Name: "t", Arguments: []byte(`{"a":1.0}`)}}}}); err != nil {
				t.Fatal(err)
			}
			must[string](t)(w.PutQuestion(ctx, run, 2, "which?", "", []string{"a"}))
			must[string](t)(w.PutPlan(ctx, run, 2, []store.PlanStep{{Intent: "x"}}))
			must[string](t)(w.OpenAttempt(ctx, run, 2, "charge"))
			must[bool](t)(w.MemoryPut(ctx, "/w", "k", "v", run, 1, "decision"))
			r2, err := OpenReadOnly(path)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer r2.Close()
			after, err := r2.Runs(context.Background())
			if err != nil {
				t.Fatalf("runs after: %v", err)
			}
			if len(after) != len(before)+1 {
				t.Fatalf("%d runs before, %d after", len(before), len(after))
			}
			// Opening it again migrates nothing more: not a byte changes.
			w.Close()
			sum := sha256.Sum256(must[[]byte](t)(os.ReadFile(path)))
			w2, err := harness.OpenWriter(path)
			if err != nil {
				t.Fatal(err)
			}
			w2.Close()
			if sha256.Sum256(must[[]byte](t)(os.ReadFile(path))) != sum {
				t.Error("a second open changed the migrated store")
			}
		})
	}
}

// A migration that cannot finish leaves the store as it was and says so in
// one line: here a 0.29 store where something else already took the name of
// a table 0.31 adds (a view called plans, which no index can be put on).
func TestOpenWriterMigrationIsAllOrNothing(t *testing.T) {
	path := copyFixture(t, "store-0.29.0/aggregates.sqlite3")
	db := rawDB(t, path)
	if _, err := db.Exec("CREATE VIEW plans AS SELECT 1 AS run_id, 1 AS verdict"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := schemaDump(t, path)
	_, err := harness.OpenWriter(path)
	var se *store.Error
	if err == nil || !errors.As(err, &se) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "left it as it was") {
		t.Fatalf("err = %v", err)
	}
	if got := schemaDump(t, path); got != want {
		t.Fatalf("the failed migration changed the store:\n%s", lineDiff(want, got))
	}
}

func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func lineDiff(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
