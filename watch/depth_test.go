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

// TestJournalTakesNoVersionPerRefresh: files only appended to, each write
// readable when it returns, need no re-check after a refresh, and no
// Version before one: a Version that stats every rollout of a tree of
// months cost more than the refresh. Every append still arrives, by its
// own event. On main each refresh took a Version and armed re-checks
// that took more.
func TestJournalTakesNoVersionPerRefresh(t *testing.T) {
	for _, journal := range []bool{false, true} {
		root := t.TempDir()
		day := filepath.Join(root, "2026", "03", "24")
		if err := os.MkdirAll(day, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(day, "rollout-1.jsonl")
		var mu sync.Mutex
		probes := 0
		version := func() (uint64, error) {
			mu.Lock()
			defer mu.Unlock()
			probes++
			fi, err := os.Stat(file)
			if err != nil {
				return 0, nil
			}
			return uint64(fi.Size()), nil
		}
		w, err := New(noSafety(Options{Path: root, Depth: 3, Journal: journal, Version: version}))
		if err != nil {
			t.Fatal(err)
		}
		seen := int64(0)
		scan := func(context.Context) (int, error) {
			fi, err := os.Stat(file)
			if err != nil || fi.Size() == seen {
				return 0, nil
			}
			mu.Lock()
			seen = fi.Size()
			mu.Unlock()
			return 1, nil
		}
		startConsumer(t, w, handlers{refresh: scan})
		want := int64(0)
		for i := range 10 {
			line := fmt.Sprintf("{\"step\":%d}\n", i)
			appendTo(t, file, line)
			want += int64(len(line))
			eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return seen == want }, "journal %v: line %d not seen", journal, i)
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // the re-checks' back-off runs out
		mu.Lock()
		n := probes
		mu.Unlock()
		w.Close()
		if journal && n > 1 {
			t.Errorf("a journal took %d Versions over ten refreshes, want the one at the start", n)
		}
		if !journal && n <= 10 {
			t.Errorf("without Journal %d Versions over ten refreshes: the test no longer tells the two apart", n)
		}
	}
}
