//go:build unix

package bigrun

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Tree writes an io-harness store of n runs, each the child of the one
// before it (a chain) or all children of run 1 (wide), every one running;
// it is kept under CacheDir and built once.
func Tree(t testing.TB, n int, chain bool) string {
	t.Helper()
	kind := "wide"
	if chain {
		kind = "chain"
	}
	dir := CacheDir(t, fmt.Sprintf("%s-%d", kind, n))
	path := filepath.Join(dir, "runs.sqlite3")
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	os.Remove(path)
	s, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=synchronous(OFF)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO runs (id, goal, file, provider, parent_run_id, depth, status, started_at) VALUES (?, ?, '/w', 'p', ?, ?, 'running', '2026-11-29T12:00:00.000Z')`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		var parent any
		depth := 0
		switch {
		case i == 1:
		case chain:
			parent, depth = i-1, i-1
		default:
			parent, depth = 1, 1
		}
		if _, err := st.Exec(i, fmt.Sprintf("goal %d", i), parent, depth); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".done", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
