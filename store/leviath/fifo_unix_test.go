//go:build unix

package leviath

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO as a run's journal or meta.json is refused before it is opened
// (opening one for reading blocks until a writer comes): the directory
// opens at once, the run is listed, and the problem says what the file is.
func TestFIFORunFiles(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	m := baseMeta("fine-1785427200-0123456789ab", "fine", "a readable run", t0)
	newGenRun(t, runs, m, true, stdRegions(m.task)...)
	for _, f := range []string{"run.lvr", "meta.json"} {
		d := filepath.Join(runs, "piped-"+strings.TrimSuffix(f, filepath.Ext(f))+"-1785427300-0a0a0a0a0a0a")
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		other := map[string]string{"run.lvr": "meta.json", "meta.json": "run.lvr"}[f]
		body := []byte(`{"run_id":"x","status":"running","task":"piped"}`)
		if other == "run.lvr" {
			body = []byte("LVR1\x00\x01")
		}
		if err := os.WriteFile(filepath.Join(d, other), body, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(d, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, probs := openWithin(t, runs)
	defer s.Close()
	if len(probs) != 2 || !strings.Contains(strings.Join(probs, "\n"), "a named pipe (FIFO), not a store file") {
		t.Errorf("problems: %q", probs)
	}
	if runs, err := s.Runs(bg); err != nil || len(runs) != 3 {
		t.Errorf("%d runs (%v)", len(runs), err)
	}
}

// A run directory whose only file is a FIFO or a device is still a run
// directory (listed as unreadable), not skipped: a runs directory of only
// such runs opens rather than being refused as holding no runs.
func TestSpecialOnlyRunDirs(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	fifoDir := filepath.Join(runs, "fifo-1785427300-0a0a0a0a0a01")
	zeroDir := filepath.Join(runs, "zero-1785427300-0a0a0a0a0a02")
	for _, d := range []string{fifoDir, zeroDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "run.lvr"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zeroDir, "run.lvr")); err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, path string, nRuns int, want ...string) {
		t.Helper()
		if !Detect(path) {
			t.Errorf("Detect(%s) = false", path)
		}
		s, probs := openWithin(t, path)
		defer s.Close()
		all := strings.Join(probs, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("problems lack %q: %q", w, probs)
			}
		}
		if rs, err := s.Runs(bg); err != nil || len(rs) != nRuns {
			t.Errorf("%d runs, want %d (%v)", len(rs), nRuns, err)
		}
	}
	onlyFIFO := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(onlyFIFO, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fifoDir, filepath.Join(onlyFIFO, filepath.Base(fifoDir))); err != nil {
		t.Fatal(err)
	}
	t.Run("only-fifo", func(t *testing.T) {
		open(t, onlyFIFO, 1, filepath.Join(onlyFIFO, filepath.Base(fifoDir), "run.lvr"), "a named pipe (FIFO), not a store file")
	})
	if err := os.Rename(filepath.Join(onlyFIFO, filepath.Base(fifoDir)), fifoDir); err != nil {
		t.Fatal(err)
	}
	m := baseMeta("fine-1785427200-0123456789ab", "fine", "a readable run", t0)
	newGenRun(t, runs, m, true, stdRegions(m.task)...)
	t.Run("mixed", func(t *testing.T) {
		open(t, runs, 3, filepath.Join(fifoDir, "run.lvr"), "a named pipe (FIFO), not a store file",
			filepath.Join(zeroDir, "run.lvr"), "a character device")
	})
}

// openWithin opens path, failing the test if Open blocks (on a FIFO or a
// device) for 5 s, and returns the store and its problems' lines.
func openWithin(t *testing.T, path string) (*Store, []string) {
	t.Helper()
	done := make(chan error, 1)
	var s *Store
	go func() {
		var err error
		s, err = Open(path)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a FIFO or a device")
	}
	var probs []string
	for _, p := range s.Problems() {
		probs = append(probs, p.Error())
	}
	return s, probs
}
