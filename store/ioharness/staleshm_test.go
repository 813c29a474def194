package ioharness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
)

// A crashed writer's -shm can be whole but older than its WAL (killed
// after restarting the WAL, before the -shm said so). Nobody holds it, so
// vigil reads the WAL without trusting the -shm or rewriting it: at once,
// with every commit, and the -shm as it was.
func TestCrashedWritersStaleShm(t *testing.T) {
	py := foreign.Python(t)
	path := populatedStore(t, t.TempDir())
	py.MustExec(t, path, "INSERT INTO runs (goal, file) VALUES ('first crash', '/w'); CRASH")
	stale, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	py.MustExec(t, path, "PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO runs (goal, file) VALUES ('second crash', '/w'); CRASH")
	if err := os.WriteFile(path+"-shm", stale, 0o644); err != nil {
		t.Fatal(err)
	}
	before := foreign.Snap(t, filepath.Dir(path))
	t0 := time.Now()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open after %v: %v", time.Since(t0), err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background())
	if err != nil {
		t.Fatalf("runs after %v: %v", time.Since(t0), err)
	}
	t.Logf("read in %v", time.Since(t0))
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("reading took %v", took)
	}
	var goals []string
	for _, r := range runs {
		goals = append(goals, r.Goal)
	}
	if !strings.Contains(strings.Join(goals, "|"), "second crash") {
		t.Errorf("the WAL's last commit is not shown: %q", goals)
	}
	s.Close()
	if d := before.Diff(foreign.Snap(t, filepath.Dir(path))); d != "" {
		t.Error(d)
	}
}
