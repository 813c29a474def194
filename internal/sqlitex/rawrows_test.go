package sqlitex

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/vigil-run/vigil/internal/testkit"
)

// A raw row finds each column's value in the row's own array of Mem, where
// sqlite3_column_value finds it: on rows of every storage class (python3's
// sqlite3 writes them, as another party would), every column's value is
// the very pointer sqlite3_column_value gives, out of range included, and
// each reads as database/sql reads it.
func TestRawRowValuesAreColumnValues(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path := filepath.Join(t.TempDir(), "v.sqlite3")
	script := `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a, b TEXT, c BLOB, d REAL)")
rows = [(1, 7, "héllo ✂", b"\x00\xff", 1.5), (2, None, None, None, None), (3, "text in a", "", b"", -0.0),
        (4, 2.25, "x" * 5000, b"y" * 5000, 1e300), (5, b"blob in a", "7", 9, "text in d")]
db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
db.commit()
`
	if out, err := exec.Command("python3", "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	db, _, err := OpenRead(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = "SELECT id, a, b, c, d, 'lit', NULL FROM t WHERE id >= ? ORDER BY id"
	var want [][]any
	rows, err := db.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		v := make([]any, 7)
		p := make([]any, 7)
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	rows.Close()
	var got [][]any
	err = EachRawRow(context.Background(), db, q, []any{1}, func(r *RawRow) error {
		if r.row == 0 {
			t.Error("a row without its values: every column was asked of SQLite")
		}
		for i := -1; i <= 8; i++ {
			if v, api := r.val(i), sqlite3.Xsqlite3_column_value(r.tls, r.stmt, int32(i)); v != api {
				t.Errorf("column %d: value at %#x, sqlite3_column_value says %#x", i, v, api)
			}
		}
		v := make([]any, 7)
		for i := range v {
			v[i] = r.Value(i)
		}
		got = append(got, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("raw rows\n%#v\ndatabase/sql\n%#v", got, want)
	}
	if len(got) != 5 {
		t.Errorf("%d rows", len(got))
	}
}
