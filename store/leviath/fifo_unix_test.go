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
	done := make(chan error, 1)
	var s *Store
	go func() {
		var err error
		s, err = Open(runs)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open blocked on a FIFO")
	}
	defer s.Close()
	var probs []string
	for _, p := range s.Problems() {
		probs = append(probs, p.Error())
	}
	if len(probs) != 2 || !strings.Contains(strings.Join(probs, "\n"), "a named pipe (FIFO), not a store file") {
		t.Errorf("problems: %q", probs)
	}
	if runs, err := s.Runs(bg); err != nil || len(runs) != 3 {
		t.Errorf("%d runs (%v)", len(runs), err)
	}
}
