package sqlitex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

func TestDSNKeepsTheQuery(t *testing.T) {
	got := DSN("/tmp/a#b?c%d.sqlite3", "mode=ro")
	if !strings.HasSuffix(got, "?mode=ro") || strings.Count(got, "?") != 1 || strings.Contains(got, "#") {
		t.Errorf("DSN = %q: the path cut the query short", got)
	}
}

func TestMapErr(t *testing.T) {
	own := store.Errorf("/x", store.ErrNoSuchRun, nil, "no such run: 7")
	if got := MapErr("/y", own); got != error(own) {
		t.Errorf("a worded error was rewrapped: %v", got)
	}
	if got := MapErr("/y", context.Canceled); got != context.Canceled {
		t.Errorf("cancellation was rewrapped: %v", got)
	}
	if MapErr("/y", nil) != nil {
		t.Error("nil is an error")
	}
	err := MapErr("/y", errors.New("disk on fire\nsecond line"))
	if !errors.Is(err, store.ErrIO) || err.Error() != "/y: cannot read store: disk on fire second line" {
		t.Errorf("got %q", err)
	}
}

func TestPreflight(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	words := Preflight{IsDir: "is a directory, not a Foo database", Empty: "not a Foo database: the file is empty"}
	for _, c := range []struct {
		p    Preflight
		path string
		kind error
		says string
	}{
		{Preflight{}, dir, store.ErrIsDirectory, dir + ": is a directory, not a store file"},
		{words, dir, store.ErrIsDirectory, dir + ": is a directory, not a Foo database"},
		{Preflight{}, empty, store.ErrNotAStore, empty + ": not a run store vigil reads: the file is empty"},
		{words, empty, store.ErrNotAStore, empty + ": not a Foo database: the file is empty"},
		{words, text, store.ErrNotSQLite, text + ": not a SQLite database"},
		{words, filepath.Join(dir, "nope"), store.ErrNotFound, filepath.Join(dir, "nope") + ": no such file"},
	} {
		_, _, err := c.p.Check(c.path)
		if !errors.Is(err, c.kind) || err.Error() != c.says {
			t.Errorf("Check(%s) = %v, want %q", c.path, err, c.says)
		}
	}
}

// The header is read through SQLite, yet the preflight still says how a
// damaged file is damaged, and reading it creates nothing beside it.
func TestPreflightThroughSQLite(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sqlite3")
	db, err := OpenWrite(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA journal_mode=WAL", "CREATE TABLE t (x)", "INSERT INTO t VALUES (randomblob(50000))", "PRAGMA user_version = 9"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	half := write("half.sqlite3", b[:len(b)/2])
	cut := write("cut.sqlite3", b[:60])
	for _, c := range []struct {
		path string
		kind error
		says string
	}{
		{half, store.ErrCorrupt, fmt.Sprintf("truncated: %d of %d bytes", len(b)/2, len(b))},
		{cut, store.ErrCorrupt, "shorter than a SQLite header"},
	} {
		_, _, err := Preflight{}.Check(c.path)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Check(%s) = %v, want %v saying %q", filepath.Base(c.path), err, c.kind, c.says)
		}
	}
	// The same short file with a live rollback journal beside it is a
	// writer mid-commit (page 1 goes in among the others): busy, not damaged.
	journal := append(append([]byte{}, journalMagic...), make([]byte, 504)...)
	write("half.sqlite3-journal", journal)
	if _, _, err := (Preflight{}).Check(half); !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "half.sqlite3-journal sits beside it") {
		t.Errorf("Check(half) with a live journal = %v, want busy", err)
	}
	os.Remove(half + "-journal")
	_, head, err := Preflight{}.Check(good)
	if err != nil || UserVersion(head) != 9 || !WALHeader(head) {
		t.Errorf("Check(good) = %v, user_version %d, WAL %v", err, UserVersion(head), WALHeader(head))
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 3 {
		t.Errorf("the directory holds %d files: the preflight created some", len(es))
	}
}
