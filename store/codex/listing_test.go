package codex

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The listing reads a directory again only when its mtime moved (a new or
// removed entry moves it; an append to a rollout does not): rollouts and
// day directories made or removed since are seen, and a directory whose
// mtime did not move is taken as it was read, which is what it relies on.
func TestListingReadsOnlyDirectoriesThatMoved(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	old := time.Now().Add(-time.Hour)
	put := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	age := func() {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chtimes(p, old, old)
			}
			return nil
		})
	}
	a := put("2026/03/24/rollout-2026-03-24T10-00-00-a.jsonl")
	b := put("2026/03/25/rollout-2026-03-25T10-00-00-b.jsonl")
	put("2026/03/25/notes.txt")
	put("2026/03/25/1/2/3/rollout-2026-03-25T10-00-00-too-deep.jsonl")
	age()
	var l listing
	want := func(why string, files ...string) {
		t.Helper()
		if got := l.rollouts(root); !slices.Equal(got, files) {
			t.Errorf("%s: %v, want %v", why, got, files)
		}
	}
	want("at first", a, b)
	// A rollout made with its directory's mtime put back is not seen: the
	// listing trusts the mtime.
	hidden := put("2026/03/24/rollout-2026-03-24T11-00-00-h.jsonl")
	os.Chtimes(filepath.Dir(hidden), old, old)
	want("a directory whose mtime did not move", a, b)
	// Made as a CLI makes them: the mtime moves.
	c := put("2026/03/25/rollout-2026-03-25T11-00-00-c.jsonl")
	want("a new rollout", a, b, c)
	d := put("2026/04/01/rollout-2026-04-01T10-00-00-d.jsonl")
	want("a new month", a, b, c, d)
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	want("a removed rollout", a, c, d)
	if err := os.RemoveAll(filepath.Join(root, "2026", "04")); err != nil {
		t.Fatal(err)
	}
	want("a removed month", a, c)
	os.Chtimes(filepath.Dir(hidden), time.Now(), time.Now())
	want("the directory touched", a, hidden, c)
}
