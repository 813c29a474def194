package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestDirectoryModeToDepth: a journal that nests its files by date
// (Codex's sessions/YYYY/MM/DD/rollout-*.jsonl) is watched to Depth: an
// append to a file three directories down, in a day directory there at
// the start or made since (with its month, as mkdir -p makes them), is an
// event; with the safety tick and the re-checks off, nothing else could
// deliver it. On main only the immediate subdirectories were watched.
func TestDirectoryModeToDepth(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "2026", "03", "24")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(pushOnly(Options{Path: root, Depth: 3}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	total := int64(0)
	scan := func(context.Context) (int, error) {
		var sum int64
		files, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*.jsonl"))
		for _, p := range files {
			if fi, err := os.Stat(p); err == nil {
				sum += fi.Size()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		grew := sum != total
		total = sum
		if grew {
			return 1, nil
		}
		return 0, nil
	}
	size := func() int64 { mu.Lock(); defer mu.Unlock(); return total }
	startConsumer(t, w, handlers{refresh: scan})
	want := int64(0)
	for _, day := range []string{old, filepath.Join(root, "2026", "04", "01")} {
		if err := os.MkdirAll(day, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			line := fmt.Sprintf("{\"step\":%d}\n", i)
			appendTo(t, filepath.Join(day, "rollout-1.jsonl"), line)
			want += int64(len(line))
			eventually(t, 5*time.Second, func() bool { return size() == want }, "%s line %d not seen (%d of %d bytes)", day, i, size(), want)
		}
	}
	// Below Depth nothing is watched.
	deep := filepath.Join(root, "2026", "04", "01", "deeper")
	if err := os.Mkdir(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range w.fw.WatchList() {
		if p == deep {
			t.Errorf("%s is watched, four levels down", deep)
		}
	}
}
