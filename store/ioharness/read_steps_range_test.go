package ioharness_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A stretch of a run's timeline read by row range (EachStepRow) folds into
// exactly the steps Steps has there: over a table C SQLite wrote with two
// runs interleaved, past one read's chunk, and provider retries written
// rows before the step they fold under.
func TestEachStepRowFoldsAsSteps(t *testing.T) {
	py := testkit.Tool(t, "python3", "the foreign writer is python3's sqlite3")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	s, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	script := `import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN")
db.execute("INSERT INTO runs (id, goal, file, status) VALUES (1, 'one', '/w', 'running')")
db.execute("INSERT INTO runs (id, goal, file, status) VALUES (2, 'two', '/w', 'running')")
for n in range(1, 12001):
    if n % 7 == 0:
        db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (1, ?, 'retry 1 after Timeout in 1s', '', 0)", (n,))
        db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (2, ?, 'other', 'r', 1)", (n,))
    db.execute("INSERT INTO steps (run_id, step, decision, tool_call, result, tokens) VALUES (1, ?, ?, 'read_file:{}', 'ok', 3)", (n, "did %d" % n))
    db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (2, ?, 'other', 'r', 1)", (n,))
db.execute("INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (1, 12001, 'retry 1 after Timeout in 1s', '', 0)")
db.execute("COMMIT")
`
	if out, err := exec.Command(py, "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	whole, err := src.Steps(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 12001 || !whole[len(whole)-1].Pending || len(whole[6].Retries) != 1 {
		t.Fatalf("Steps: %d steps, the last pending %v, step 7's retries %d", len(whole), whole[len(whole)-1].Pending, len(whole[6].Retries))
	}
	read := func(from, to int64) []store.Step {
		t.Helper()
		var steps []store.Step
		pages := 0
		err := src.EachStepRow(ctx, "1", from, to, func(rows []store.StepRow) error {
			pages++
			for _, r := range rows {
				if r.RunID != "1" || r.RowID < from || (to > 0 && r.RowID > to) {
					t.Fatalf("row %d of run %s read for run 1 in [%d, %d]", r.RowID, r.RunID, from, to)
				}
			}
			steps = store.AppendStepRows(steps, rows)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return steps
	}
	first := func(st store.Step) int64 {
		f := st.RowID
		for _, r := range st.Retries {
			f = min(f, r.RowID)
		}
		return f
	}
	same := func(what string, got, want []store.Step) {
		t.Helper()
		for i := range want {
			want[i].At, want[i].Latency = got[min(i, len(got)-1)].At, got[min(i, len(got)-1)].Latency
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %d steps read, want %d (first %+v, want %+v)", what, len(got), len(want), got[0], want[0])
		}
	}
	same("the whole run", read(0, 0), append([]store.Step(nil), whole...))
	for _, c := range [][2]int{{6, 7}, {6, 20}, {100, 5000}, {11990, 12001}} {
		lo, hi := c[0], c[1]
		to := int64(0)
		if hi < len(whole) {
			to = first(whole[hi]) - 1
		}
		same("a stretch", read(first(whole[lo]), to), append([]store.Step(nil), whole[lo:hi]...))
	}
}
