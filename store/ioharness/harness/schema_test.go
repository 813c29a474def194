package harness

import (
	"bufio"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// shapeLines describes a database's tables and indexes in the form of
// testdata/schema-0.66.txt, which was read off a store built by replaying
// io-harness 0.66.0's own migrations.
func shapeLines(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	q := func(query string) {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
	}
	q(`SELECT m.name||'|'||p.cid||'|'||p.name||'|'||p.type||'|'||p."notnull"||'|'||coalesce(p.dflt_value,'NULL')||'|'||p.pk
		FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type='table' AND m.name != 'sqlite_sequence' ORDER BY m.name, p.cid`)
	q(`SELECT 'index|'||il.name||'|'||m.name||'|'||il."unique"||'|'||il.partial||'|'||
		(SELECT group_concat(ii.name, ',') FROM pragma_index_info(il.name) ii)
		FROM sqlite_master m, pragma_index_list(m.name) il WHERE m.type='table' ORDER BY il.name`)
	return out
}

func readShape(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "schema-0.66.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

func TestCreateMatchesIOHarness066(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, want := shapeLines(t, s.read), readShape(t)
	if len(got) != len(want) {
		t.Errorf("%d schema lines, want %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Fatalf("schema line %d:\n got  %s\n want %s", i, got[i], want[i])
		}
	}
	var v int
	var mode string
	s.read.QueryRow("PRAGMA user_version").Scan(&v)
	s.read.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if v != 7 || mode != "wal" {
		t.Errorf("user_version %d journal_mode %s, want 7 wal", v, mode)
	}
	// Memory() has the same shape.
	m, err := Memory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if mem := shapeLines(t, m.read); strings.Join(mem, "\n") != strings.Join(got, "\n") {
		t.Error("Memory() store differs in shape from Create()")
	}
}

func TestCreateRefusesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	os.WriteFile(path, []byte("notes"), 0o644)
	if _, err := Create(path); !errors.Is(err, store.ErrExists) {
		t.Fatalf("Create over a file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "notes" {
		t.Error("the file was changed")
	}
}
