package ioharness

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
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
	f, err := os.Open(filepath.Join("testdata", "schema-0.66.txt"))
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

// Older io-harness stores have a subset of the tables, and their columns
// are a prefix of today's: that is what lets one query serve every version.
func TestOlderFixturesArePrefixesOf066(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := map[string][]string{}
	for _, l := range readShape(t) {
		f := strings.Split(l, "|")
		if f[0] != "index" {
			want[f[0]] = append(want[f[0]], strings.Join(f[2:], "|"))
		}
	}
	for _, name := range []string{"store-0.22.0/populated.sqlite3", "store-0.29.0/aggregates.sqlite3"} {
		s := openFixture(t, filepath.Join(dir, name))
		have := map[string][]string{}
		for _, l := range shapeLines(t, s.read) {
			f := strings.Split(l, "|")
			if f[0] != "index" {
				have[f[0]] = append(have[f[0]], strings.Join(f[2:], "|"))
			}
		}
		for table, cols := range have {
			w := want[table]
			if len(cols) > len(w) {
				t.Errorf("%s: table %s has more columns than 0.66", name, table)
				continue
			}
			for i := range cols {
				if cols[i] != w[i] {
					t.Errorf("%s: %s column %d is %s, 0.66 has %s", name, table, i, cols[i], w[i])
				}
			}
		}
		if _, err := s.Runs(context.Background()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
