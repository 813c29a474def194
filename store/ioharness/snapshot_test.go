package ioharness

import (
	"context"
	"os"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
)

// A store nobody has open is read as the file holds it (opening it the
// usual way would create -wal and -shm beside it). When a writer in another
// process opens it and commits, the browser follows: its data_version
// probe moves (the watcher's safety poll) and Changes returns the commit.
func TestSnapshotFollowsAWriterThatArrives(t *testing.T) {
	py := foreign.Python(t)
	ctx := context.Background()
	path := populatedStore(t, t.TempDir())
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("browsing created %s", f)
		}
	}
	v1 := must[uint64](t)(r.DataVersion())
	cur := must[store.Cursor](t)(r.Head(ctx))
	if v := must[uint64](t)(r.DataVersion()); v != v1 {
		t.Fatalf("data_version moved with nothing written: %d → %d", v1, v)
	}
	// A writer that stays: its -wal and -shm remain while it runs.
	py.MustExec(t, path, "INSERT INTO runs (goal, file) VALUES ('from elsewhere', '/w'); CRASH")
	if v := must[uint64](t)(r.DataVersion()); v == v1 {
		t.Error("data_version did not move after another process committed")
	}
	ch, _, err := r.Changes(ctx, cur)
	if err != nil || len(ch.Runs) != 1 || ch.Runs[0].Goal != "from elsewhere" {
		t.Fatalf("Changes after another process committed: %+v %v", ch, err)
	}
}
