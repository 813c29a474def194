package sqlitex

import (
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/heldfiles"
)

// Every connection sqlitex opens, writing or browsing, is counted in
// heldfiles while it is open, so code that opens files with the os can
// leave the database alone; once all are closed the file is free again.
func TestConnectionsAreCountedWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.sqlite3")
	w, err := OpenWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA journal_mode=WAL", "CREATE TABLE t (x)", "INSERT INTO t VALUES (1)"} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if !heldfiles.Held(path) {
		t.Fatal("the writing connection is not counted")
	}
	r, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.QueryRow("SELECT count(*) FROM t").Scan(new(int)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if !heldfiles.Held(path) {
		t.Fatal("the browsing connection is not counted once the writer closed")
	}
	r.Close()
	if heldfiles.Held(path) {
		t.Fatal("the file is still counted as held after every connection closed")
	}
	if _, err := ReadHeader(path); err != nil {
		t.Fatal(err)
	}
	if heldfiles.Held(path) {
		t.Fatal("the header's connection is still counted after it closed")
	}
}
