package codex_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Once its watcher calls Touched, the tree's Changes stats only the
// rollouts events named since the cursor's look: an append no event has
// named yet is not read, the one named is, a rollout in a new day
// directory comes with the event naming the directory, and Version (the
// safety tick) finds an append no event named.
func TestWatchedTreeStatsWhatEventsNamed(t *testing.T) {
	ctx := context.Background()
	lines := fixtureLines(t, steps3ID)
	root, file := sessionsTree(t, steps3ID, lines[:14])
	src := open(t, root)
	spec := src.Watch()
	if spec.Touched == nil {
		t.Fatal("the sessions tree gives its watcher no Touched")
	}
	if _, err := spec.Touched(nil); err != nil {
		t.Fatal(err)
	}
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, cur, err = src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}

	appendTo(t, file, bytes.Join(lines[14:16], nil))
	if ch, _, _ := src.Changes(ctx, cur); len(ch.Steps) != 0 {
		t.Fatalf("a watched tree read a rollout no event named yet: %+v", ch.Steps)
	}
	if _, err := spec.Touched([]string{file}); err != nil {
		t.Fatal(err)
	}
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || len(ch.Steps) != 1 || !ch.Steps[0].Pending {
		t.Fatalf("the append an event named: %+v %v", ch, err)
	}

	day := filepath.Join(root, "2026", "12", "05")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(day, "rollout-2026-12-05T09-00-00-"+steps3ID[:8]+"-0000-7000-8000-000000000001.jsonl")
	body := bytes.ReplaceAll(bytes.Join(lines, nil), []byte(steps3ID), []byte(steps3ID[:8]+"-0000-7000-8000-000000000001"))
	if err := os.WriteFile(other, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Touched([]string{day}); err != nil {
		t.Fatal(err)
	}
	ch, next, err = src.Changes(ctx, next)
	if err != nil || len(ch.Runs) == 0 {
		t.Fatalf("the rollout in a new day directory: %+v %v", ch, err)
	}

	appendTo(t, file, bytes.Join(lines[16:19], nil))
	if _, err := spec.Version(); err != nil {
		t.Fatal(err)
	}
	ch, _, err = src.Changes(ctx, next)
	if err != nil || len(ch.Steps) != 1 || ch.Steps[0].Pending {
		t.Fatalf("an append Version found: %+v %v", ch, err)
	}
}
