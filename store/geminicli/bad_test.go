package geminicli_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// A malformed line is one problem naming the file and line; the rest of the
// session still shows (the CLI's own load skips such a line too).
func TestMalformedLineIsOneProblem(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-52f24ebd.jsonl")
	var b [][]byte
	b = append(b, lines[:6]...)
	b = append(b, []byte("{\"id\":\"broken\",\"type\":\x1b[31m\n"))
	b = append(b, lines[6:]...)
	writeFile(t, file, bytes.Join(b, nil))
	src := open(t, dir)
	for range 2 { // read twice: still one problem
		steps, err := src.Steps(context.Background(), "52f24ebd-9acb-4c90-9fe4-af37c29da39e")
		if err != nil || len(steps) != 4 {
			t.Fatalf("steps %d, %v: the rest of the session must show", len(steps), err)
		}
	}
	probs := src.Problems()
	if len(probs) != 1 {
		t.Fatalf("problems %v, want one", probs)
	}
	msg := probs[0].Error()
	if !strings.Contains(msg, file) || !strings.Contains(msg, "line 7") || strings.ContainsAny(msg, "\n") || !errors.Is(probs[0], store.ErrCorrupt) {
		t.Errorf("problem %q", msg)
	}
}

// A last line without its newline is a write in progress: not a step, not
// a problem, until it is whole.
func TestTruncatedLastLineWaits(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-52f24ebd.jsonl")
	last := lines[len(lines)-2] // the answer
	body := bytes.Join(lines[:len(lines)-2], nil)
	writeFile(t, file, append(append([]byte{}, body...), last[:20]...))
	src := open(t, dir)
	steps, _ := src.Steps(context.Background(), "52f24ebd-9acb-4c90-9fe4-af37c29da39e")
	if len(steps) != 3 || len(src.Problems()) != 0 {
		t.Fatalf("%d steps, problems %v: the torn answer must wait", len(steps), src.Problems())
	}
	cur, _ := src.Head(context.Background())
	appendFile(t, file, last[20:])
	ch, _ := changes(t, src, cur)
	if len(ch.Steps) != 1 || ch.Steps[0].Number != 4 {
		t.Fatalf("the completed answer: %+v", ch.Steps)
	}
}

// Decisions are not taken here: Decide refuses as read-only, and ReadOnly
// says why in one line.
func TestReadOnly(t *testing.T) {
	root, _, _, _ := project(t)
	src := open(t, root)
	ro, why := src.ReadOnly()
	if !ro || !strings.Contains(why, "vigil gate") {
		t.Errorf("ReadOnly %v %q", ro, why)
	}
	if _, err := src.Decide(context.Background(), store.Decision{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Decide: %v", err)
	}
}

// A file whose header is still being written is not a run yet (its id is in
// the header); once the header is whole it is, under that id.
func TestRunWaitsForItsHeader(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	root, _, _, _ := project(t)
	file := filepath.Join(root, "chats", "session-2026-12-04T18-40-aaaaaaaa.jsonl")
	writeFile(t, file, lines[0][:30])
	src := open(t, root)
	if runs := runsByID(t, src); len(runs) != 3 {
		t.Fatalf("a torn header made a run: %v", len(runs))
	}
	cur, _ := src.Head(context.Background())
	appendFile(t, file, lines[0][30:])
	ch, _ := changes(t, src, cur)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != "52f24ebd-9acb-4c90-9fe4-af37c29da39e" {
		t.Fatalf("the whole header: %+v", ch.Runs)
	}
}
