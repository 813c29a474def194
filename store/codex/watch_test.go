package codex_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/watch"
)

// TestWatchFollowsANewDayDirectory: the watcher follows a directory and
// its immediate subdirectories (watch.Options.Path), and Codex nests its
// sessions three deep by date. A rollout written in a day directory that
// appears after the watch started still signals: through the spec's
// Version, on the watcher's safety tick.
func TestWatchFollowsANewDayDirectory(t *testing.T) {
	lines := fixtureLines(t, steps3ID)
	root, _ := sessionsTree(t, steps3ID, lines)
	src := open(t, root)
	spec := src.Watch()
	if spec.Path != root || spec.Version == nil || spec.Depth < 3 {
		t.Fatalf("watch spec %+v: want the sessions directory to its day directories, with a Version probe", spec)
	}
	w, err := watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, SafetyPoll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	drain := time.After(300 * time.Millisecond)
	for done := false; !done; {
		select {
		case <-w.C():
			w.Ack(false)
		case <-drain:
			done = true
		}
	}
	day := filepath.Join(root, "2026", "12", "05")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, "rollout-2026-12-05T00-00-00-"+childID+".jsonl"), bytes.Join(fixtureLines(t, childID), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	case <-time.After(5 * time.Second):
		t.Fatal("no signal for a rollout in a new day directory")
	}
}
