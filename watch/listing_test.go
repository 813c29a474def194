package watch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Directory mode lists the directory on the safety tick for subdirectories
// to watch, but only when its mtime says an entry came or went: an idle
// runs directory of ten thousand runs is not listed every second. A new
// run directory is listed, watched, and its appends signalled.
func TestIdleDirectoryIsNotListedEachTick(t *testing.T) {
	runs := t.TempDir()
	if err := os.Mkdir(filepath.Join(runs, "r1"), 0o755); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(runs, past, past); err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Path: runs, Names: []string{"run.lvr"}, SafetyPoll: 10 * time.Millisecond, RecheckMin: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	deadline := time.Now().Add(20 * time.Second)
	for w.Stats().Probes < 30 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := w.Stats(); st.Probes < 30 || st.Listings > 2 {
		t.Fatalf("%d safety ticks listed the unchanged directory %d times", st.Probes, st.Listings)
	}
	before := w.Stats().Listings
	if err := os.Mkdir(filepath.Join(runs, "r2"), 0o755); err != nil {
		t.Fatal(err)
	}
	for w.Stats().Listings == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if w.Stats().Listings == before {
		t.Fatal("a new run directory was never listed")
	}
	// The listing that added r2 asks for a refresh; after it, an append
	// to r2 is one more.
	select {
	case <-w.C():
		w.Ack(false)
	case <-time.After(20 * time.Second):
		t.Fatal("adding the new run directory asked for no refresh")
	}
	changed := w.Stats().Changed
	appendTo(t, filepath.Join(runs, "r2", "run.lvr"), "frame\n")
	select {
	case <-w.C():
		if w.Stats().Changed == changed {
			t.Error("no Changed counted for the append")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an append to the new run directory was not signalled")
	}
}
