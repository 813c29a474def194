package ioharness

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/foreign"
)

// An embedding program writes runs through Create and browses them through
// Open in the same process, while foreign C-SQLite processes read and write
// the store. Open must never drop the writer's locks (a close() of any
// descriptor of the file does, on POSIX): then the next foreign process to
// close thinks it is the last, checkpoints, and unlinks the WAL the writer
// still writes into.
func TestEmbeddedWriterAndBrowserBesideForeignParties(t *testing.T) {
	cli := foreign.SQLite3(t)
	py := foreign.Python(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run := must[string](t)(w.StartRun(ctx, "embedded", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	step := 0
	commit := func() {
		t.Helper()
		step++
		if err := w.CheckpointStep(ctx, run, StepRecord{Step: step, Decision: fmt.Sprintf("step %d", step)}); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	wal := foreign.WatchWAL(t, path)

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cli.MustExec(t, path, "SELECT count(*) FROM steps")
	wal.Check(t, "after Open and one foreign read")

	foreignRows := 0
	for i := 0; i < 30; i++ {
		commit()
		time.Sleep(20 * time.Millisecond)
		switch i % 3 {
		case 0:
			cli.MustExec(t, path, "SELECT count(*) FROM steps")
		case 1:
			py.MustExec(t, path, fmt.Sprintf("INSERT INTO memory (workspace, key, value, run_id, step, created_at) VALUES ('/py', 'k%d', 'v', %s, 0, datetime('now'))", i, run))
			foreignRows++
		case 2:
			if _, err := r.Runs(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wal.Check(t, fmt.Sprintf("after commit %d", step))
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := cli.MustExec(t, path, "SELECT count(*) FROM steps"); got != fmt.Sprint(step) {
		t.Errorf("the file holds %s steps after exit; %d were committed", got, step)
	}
	if got := cli.MustExec(t, path, "SELECT count(*) FROM memory WHERE workspace = '/py'"); got != fmt.Sprint(foreignRows) {
		t.Errorf("the file holds %s of the %d rows Python committed", got, foreignRows)
	}
}
