package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// io-harness's MEMORY_MAX_ENTRIES doctest (src/state.rs): 64 entries fit;
// the 65th write evicts the oldest, which is named.
func TestMemoryEntryCap(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "remember", "/repo"))
	for i := 0; i < MaxMemoryEntries; i++ {
		w := must[MemoryWrite](t)(s.MemoryWriteEntry(ctx, "/repo", fmt.Sprintf("fact-%d", i), "small", run, 1, ""))
		if w.Refused || len(w.Evicted) != 0 {
			t.Fatalf("write %d: %+v (everything fits until the cap)", i, w)
		}
	}
	w := must[MemoryWrite](t)(s.MemoryWriteEntry(ctx, "/repo", "fact-new", "small", run, 2, ""))
	if len(w.Evicted) != 1 || w.Evicted[0] != "fact-0" {
		t.Fatalf("evicted %q, want [fact-0]", w.Evicted)
	}
	if l := must[[]MemoryEntry](t)(s.MemoryList(ctx, "/repo")); len(l) != MaxMemoryEntries {
		t.Errorf("%d entries, want %d", len(l), MaxMemoryEntries)
	}
	if _, ok, _ := s.MemoryGet(ctx, "/repo", "fact-0"); ok {
		t.Error("fact-0 is still there")
	}
}

// The MEMORY_MAX_CHARS doctest: eight full-size notes fill the workspace
// exactly, and the ninth evicts on characters, not on count. A pinned entry
// is never evicted but still counts (enforce_memory_caps); MemoryPut, the
// short form, enforces the caps too.
func TestMemoryCharCap(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "remember", "/repo"))
	long := strings.Repeat("x", MaxMemoryEntryChars)
	for i := 0; i < 8; i++ {
		if w := must[MemoryWrite](t)(s.MemoryWriteEntry(ctx, "/repo", fmt.Sprintf("note-%d", i), long, run, 1, "")); len(w.Evicted) != 0 {
			t.Fatalf("note-%d evicted %q", i, w.Evicted)
		}
	}
	if w := must[MemoryWrite](t)(s.MemoryWriteEntry(ctx, "/repo", "note-8", long, run, 2, "")); len(w.Evicted) != 1 || w.Evicted[0] != "note-0" {
		t.Fatalf("evicted %q, want [note-0]", w.Evicted)
	}
	// Pin note-1 (as Store::memory_pin does) and write again: note-1 is
	// skipped, note-2 goes.
	db := rawDB(t, s.Path())
	if _, err := db.Exec("UPDATE memory SET pinned = 1 WHERE key = 'note-1'"); err != nil {
		t.Fatal(err)
	}
	if ok := must[bool](t)(s.MemoryPut(ctx, "/repo", "note-9", long, run, 3, "")); !ok {
		t.Fatal("not written")
	}
	keys := map[string]bool{}
	for _, m := range must[[]MemoryEntry](t)(s.MemoryList(ctx, "/repo")) {
		keys[m.Key] = true
	}
	if !keys["note-1"] || keys["note-2"] || !keys["note-9"] || len(keys) != 8 {
		t.Errorf("after the pinned write: %v", keys)
	}
	// A value past the entry cap is cut and marked, and the cut counts.
	w := must[MemoryWrite](t)(s.MemoryWriteEntry(ctx, "/repo", "rambling", strings.Repeat("y", 3*MaxMemoryEntryChars), run, 4, ""))
	m, _, _ := s.MemoryGet(ctx, "/repo", "rambling")
	if n := len([]rune(m.Value)); n != MaxMemoryEntryChars || !strings.HasSuffix(m.Value, "[truncated]") || len(w.Evicted) != 1 {
		t.Errorf("rambling: %d chars, evicted %q", n, w.Evicted)
	}
}

func TestRustDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0ns", 500 * time.Millisecond: "500ms", time.Second: "1s", 1500 * time.Millisecond: "1.5s",
		90 * time.Second: "90s", 1250 * time.Microsecond: "1.25ms", 30 * time.Second: "30s",
	} {
		if got := RustDuration(d); got != want {
			t.Errorf("RustDuration(%v) = %s, want %s", d, got, want)
		}
	}
}
