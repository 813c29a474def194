package geminicli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A 500 MB session opens, lists and gives a cursor without being read
// whole: Runs reads its head and tail, Head reads back to its last
// newline. The middle is a hole (a sparse file): reading it would take
// far longer than the bound below.
func TestBigSessionOpensFromHeadAndTail(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-52f24ebd.jsonl")
	writeFile(t, file, bytes.Join(lines[:3], nil))
	if err := os.Truncate(file, 500<<20); err != nil {
		t.Skip("no sparse files here:", err)
	}
	appendFile(t, file, append([]byte("\n"), bytes.Join(lines[len(lines)-2:], nil)...))
	start := time.Now()
	src := open(t, dir)
	runs := runsByID(t, src)
	if _, err := src.Head(context.Background()); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	r, ok := runs["52f24ebd-9acb-4c90-9fe4-af37c29da39e"]
	if !ok || r.Goal != "Three slow gated steps. [[mock:steps=3,delay=3]]" || r.Status != store.StatusCompleted {
		t.Fatalf("runs %+v", runs)
	}
	if took > 2*time.Second {
		t.Errorf("opening a 500 MB session took %v: it was read whole", took)
	}
}
