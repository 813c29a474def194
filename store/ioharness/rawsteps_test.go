package ioharness

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// stepsBothWays reads run 1's timeline rows twice, once on SQLite's own
// handle and once through database/sql: by a refresh (Changes from a
// cursor before the rows) and by range (EachStepRow).
func stepsBothWays(t *testing.T, path string, head store.Cursor) (raw, viaSQL [2][]store.StepRow, rawErr, sqlErr [2]error, samples [2][]store.ContextSample) {
	t.Helper()
	type reads struct {
		got     [2][]store.StepRow
		errs    [2]error
		samples []store.ContextSample
	}
	a, b := bothWays(t, path, &rawTimelineRows, func(s *Store) (r reads) {
		ctx := context.Background()
		for cur := head; ; {
			ch, next, err := s.Changes(ctx, cur)
			if err != nil {
				r.errs[0] = err
				break
			}
			r.got[0] = append(r.got[0], ch.Steps...)
			r.samples = append(r.samples, ch.Context...)
			cur = next
			if !ch.More {
				break
			}
		}
		r.errs[1] = s.EachStepRow(ctx, "1", 0, 0, func(rows []store.StepRow) error {
			r.got[1] = append(r.got[1], rows...)
			return nil
		})
		return r
	})
	return a.got, b.got, a.errs, b.errs, [2][]store.ContextSample{a.samples, b.samples}
}

// TestRawStepRowsAgree: step rows read on SQLite's handle are the rows
// database/sql reads, value for value, on rows python3's sqlite3 (a
// foreign writer) fills with every storage class (blobs, reals, numbers in
// text columns, NUL and wide runes, a tool call and a result too long for
// SQL to cut, a result led by blanks and a provider's note); a row neither
// can read (tokens that are no number) fails both. The context samples a
// refresh brings (a blob detail, one too long for SQL, numbers as text and
// reals) agree the same way.
func TestRawStepRowsAgree(t *testing.T) {
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	dir := t.TempDir()
	// The run first, a cursor on it, then the rows the cursor is before.
	mk := func(name, body string) (string, store.Cursor) {
		p := filepath.Join(dir, name)
		s, err := harness.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		py(t, p, `db.execute("INSERT INTO runs (id, goal, file, status, started_at) VALUES (1, 'g', '/w', 'running', '2026-11-29T12:00:00.000Z')")`)
		r, err := OpenReadOnly(p)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := r.Head(context.Background())
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		py(t, p, body)
		return p, cur
	}
	good, goodHead := mk("good.sqlite3", `
rows = [
 (1, 'read_file', '[read] 40 lines', 'read_file:{"path":"a"}', 300),
 (1, 7, b'blob\x00result', b'tool\x00blob', '12'),
 (2, 'é ü 𝄞', '\n\n  \r\n[step 2] provider web tool: web_search failed\nthe real line', 2.5e1, 3.0),
 (3, b'\xff\xfe', 'x' * 70000, 'y' * 70000, 0),
 (3, 'retry', 1e20, None, 7),
 (4, 'nul\x00in', '   ' + 'z' * 66000, '', -1),
 (5, 'write_file', '[step 5] provider web tool: only a note', 'write_file:{}', 9),
]
for k, r in enumerate(rows):
    tool = r[3] if r[3] is not None else ''
    db.execute("INSERT INTO steps (run_id, step, decision, result, tool_call, tokens) VALUES (1, ?, ?, ?, ?, ?)", (r[0], r[1], r[2], tool, r[4]))
ctx = [
 (1, 'assembled', 'carried=1', 270, 300),
 (1, 'compacted', 'dropped=3', 10, None),
 (2, 'assembled', b'blob\x00detail', '12', 2.0),
 (3, 'assembled', 'd' * 70000, None, None),
 (4, 'assembled', 'é ü 𝄞', 1e3, '7'),
]
for r in ctx:
    db.execute("INSERT INTO context_events (run_id, step, kind, detail, est_tokens, reported_tokens) VALUES (1, ?, ?, ?, ?, ?)", r)
`)
	bad, badHead := mk("bad.sqlite3", `
db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (1, 1, 'a', 'b', 'many')")
db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (1, 2, 'a', 'b', 3)")
`)
	for _, c := range []struct {
		path    string
		head    store.Cursor
		n       int
		wantErr bool
	}{{good, goodHead, 7, false}, {bad, badHead, 0, true}} {
		raw, viaSQL, rawErr, sqlErr, samples := stepsBothWays(t, c.path, c.head)
		if !reflect.DeepEqual(samples[0], samples[1]) {
			t.Errorf("%s: context samples differ:\nraw %+v\nsql %+v", filepath.Base(c.path), samples[0], samples[1])
		}
		if !c.wantErr && len(samples[0]) != 4 {
			t.Errorf("%s: %d context samples, want 4", filepath.Base(c.path), len(samples[0]))
		}
		for i := range raw {
			if (rawErr[i] == nil) != (sqlErr[i] == nil) || (rawErr[i] != nil && rawErr[i].Error() != sqlErr[i].Error()) {
				t.Errorf("%s read %d: raw error %v, database/sql error %v", filepath.Base(c.path), i, rawErr[i], sqlErr[i])
			}
			if !reflect.DeepEqual(raw[i], viaSQL[i]) {
				t.Errorf("%s read %d differs:\nraw %+v\nsql %+v", filepath.Base(c.path), i, raw[i], viaSQL[i])
			}
			if c.wantErr != (rawErr[i] != nil) {
				t.Errorf("%s read %d: error %v, want an error: %t", filepath.Base(c.path), i, rawErr[i], c.wantErr)
			}
			if !c.wantErr && len(raw[i]) != c.n {
				t.Errorf("%s read %d: %d rows, want %d", filepath.Base(c.path), i, len(raw[i]), c.n)
			}
		}
	}
	// What the rows say, read once: the heads are cut as before.
	raw, _, _, _, _ := stepsBothWays(t, good, goodHead)
	if len(raw[0]) != 7 {
		t.Fatalf("%d rows", len(raw[0]))
	}
	if got := raw[0][2].ResultHead; got != "the real line" {
		t.Errorf("result head after blanks and a note: %q", got)
	}
	if got := raw[0][1].Decision; got != "7" {
		t.Errorf("a number in decision reads %q", got)
	}
}
