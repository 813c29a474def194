package ioharness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
)

// A store on a read-only mount opens and is browsed whatever sits beside
// it — no -wal (SQLite would need to create one), a crashed writer's -wal
// and -shm (read with its last commit), a -wal without its -shm (read as
// the main file holds it, and said so) — and deciding is refused because
// the file system is read-only, in those words.
func TestReadOnlyMount(t *testing.T) {
	if !foreign.InMountNamespace(t) {
		return
	}
	py := foreign.Python(t)
	good, err := os.ReadFile(populatedStore(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk := func(name string, crash, dropShm bool) string {
		d := filepath.Join(dir, name)
		os.Mkdir(d, 0o755)
		p := filepath.Join(d, "runs.sqlite3")
		if err := os.WriteFile(p, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if crash {
			py.MustExec(t, p, "INSERT INTO runs (goal, file) VALUES ('after the crash', '/w'); CRASH")
		}
		if dropShm {
			os.Remove(p + "-shm")
		}
		return p
	}
	clean := mk("clean", false, false)
	crashed := mk("crashed", true, false)
	noShm := mk("noshm", true, true)
	foreign.BindReadOnly(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644); err == nil {
		t.Fatal("the bind mount is writable")
	}
	ctx := context.Background()
	for _, c := range []struct {
		name, path  string
		crashShown  bool
		wantProblem bool
	}{
		{"a store closed cleanly (no -wal)", clean, false, false},
		{"a crashed writer's -wal and -shm", crashed, true, false},
		{"a -wal without its -shm", noShm, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := foreign.Snap(t, filepath.Dir(c.path))
			s, err := Open(c.path)
			if err != nil {
				t.Fatalf("open on a read-only mount: %v", err)
			}
			defer s.Close()
			runs, err := s.Runs(ctx)
			if err != nil {
				t.Fatalf("browse on a read-only mount: %v", err)
			}
			shown := false
			for _, r := range runs {
				shown = shown || r.Goal == "after the crash"
			}
			if shown != c.crashShown {
				t.Errorf("the crashed writer's last commit shown: %v, want %v", shown, c.crashShown)
			}
			if got := len(problems(s)) > 0; got != c.wantProblem {
				t.Errorf("Problems() = %v", problems(s))
			}
			const why = "the store is on a read-only file system"
			if ro, reason := s.ReadOnly(); !ro || reason != why {
				t.Errorf("ReadOnly() = %v %q, want true %q", ro, reason, why)
			}
			reqs, err := s.Requests(ctx, true)
			if err != nil || len(reqs) == 0 {
				t.Fatalf("requests: %v %v", reqs, err)
			}
			_, err = s.Decide(ctx, store.Decision{Key: reqs[0].Key(), Verdict: store.VerdictApprove})
			if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), why) {
				t.Errorf("deciding on a read-only mount: %v; want %v saying %q", err, store.ErrReadOnly, why)
			}
			s.Close()
			if d := before.Diff(foreign.Snap(t, filepath.Dir(c.path))); d != "" {
				t.Error(d)
			}
		})
	}
}
