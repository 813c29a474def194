//go:build unix

package leviath

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// An io-harness store that happens to be named run.lvr or meta.json,
// written and browsed by this process: asking whether it, or its
// directory, is a Leviath run must not open and close the file with the os.
// On POSIX that close drops the SQLite connections' locks (the writer's
// SHARED lock among them), and the next foreign C-SQLite process to close
// then checkpoints and unlinks the WAL the writer still writes into: its
// later commits are lost. Leviath's Detect read the magic with os.Open.
func TestASQLiteStoreNamedLikeALeviathFileKeepsItsLocks(t *testing.T) {
	cli := foreign.SQLite3(t)
	ctx := context.Background()
	for _, name := range []string{"run.lvr", "meta.json"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		w, err := harness.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		run, err := w.StartRun(ctx, "named like a journal", "/w")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
			t.Fatal(err)
		}
		steps := 0
		commit := func() {
			t.Helper()
			steps++
			if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: steps, Decision: fmt.Sprintf("step %d", steps)}); err != nil {
				t.Fatal(err)
			}
		}
		commit()
		wal := foreign.WatchWAL(t, path)
		r, err := ioharness.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Runs(ctx); err != nil {
			t.Fatal(err)
		}

		// Every way vigil asks a path whether it is Leviath's.
		if f, ok := store.Detect(path); !ok || f.Name != ioharness.Format {
			t.Errorf("%s: detected as %q (%v), want %s", name, f.Name, ok, ioharness.Format)
		}
		store.Detect(dir)
		if Detect(path) || Detect(dir) {
			t.Errorf("%s: a SQLite file taken for a Leviath run", name)
		}
		if err := Explain(path); err != nil {
			t.Errorf("%s: Explain of the file: %v, want nil (the SQLite formats say what it is)", name, err)
		}
		Explain(dir)
		if s, err := Open(dir); err == nil {
			s.Runs(ctx)
			s.Close()
		}

		if held, ok := foreign.HoldsLock(os.Getpid(), path); ok && !held {
			t.Fatalf("%s: after the Leviath checks this process holds no lock on the store", name)
		}
		cli.MustExec(t, path, "SELECT count(*) FROM steps")
		wal.Check(t, name+": after the Leviath checks and one foreign read")
		commit()
		r.Close()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := cli.MustExec(t, path, "SELECT count(*) FROM steps"); got != fmt.Sprint(steps) {
			t.Errorf("%s: the file holds %s steps after the writer closed; it committed %d", name, got, steps)
		}
	}
}
