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

// stepReads reads run 1's timeline rows by a refresh (Changes from a
// cursor before the rows) and by range (EachStepRow).
func stepReads(t *testing.T, path string, head store.Cursor) (got [2][]store.StepRow, errs [2]error, samples []store.ContextSample) {
	t.Helper()
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for cur := head; ; {
		ch, next, err := s.Changes(ctx, cur)
		if err != nil {
			errs[0] = err
			break
		}
		got[0] = append(got[0], ch.Steps...)
		samples = append(samples, ch.Context...)
		cur = next
		if !ch.More {
			break
		}
	}
	errs[1] = s.EachStepRow(ctx, "1", 0, 0, func(rows []store.StepRow) error {
		got[1] = append(got[1], rows...)
		return nil
	})
	return got, errs, samples
}

// TestForeignStepRows: step rows python3's sqlite3 (a foreign writer)
// fills with every storage class (blobs, reals, numbers in text columns,
// NUL and wide runes, a tool call and a result too long for SQL to cut, a
// result led by blanks and a provider's note) are read by a refresh and by
// range alike; a row that cannot be read (tokens that are no number) fails
// both. The context samples a refresh brings (a blob detail, one too long
// for SQL, numbers as text and reals) are read too.
func TestForeignStepRows(t *testing.T) {
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
		got, errs, samples := stepReads(t, c.path, c.head)
		if !c.wantErr && len(samples) != 4 {
			t.Errorf("%s: %d context samples, want 4", filepath.Base(c.path), len(samples))
		}
		if !c.wantErr && !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: a refresh and a range read differ:\nrefresh %+v\nrange   %+v", filepath.Base(c.path), got[0], got[1])
		}
		for i := range got {
			if c.wantErr != (errs[i] != nil) {
				t.Errorf("%s read %d: error %v, want an error: %t", filepath.Base(c.path), i, errs[i], c.wantErr)
			}
			if !c.wantErr && len(got[i]) != c.n {
				t.Errorf("%s read %d: %d rows, want %d", filepath.Base(c.path), i, len(got[i]), c.n)
			}
		}
	}
	// What the rows say, read once: the heads are cut as before.
	raw, _, _ := stepReads(t, good, goodHead)
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
