package geminicli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// fixtureLines is a fixture file's lines, each with its newline.
func fixtureLines(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func changes(t *testing.T, src store.Source, cur store.Cursor) (*store.Changes, store.Cursor) {
	t.Helper()
	ch, next, err := src.Changes(context.Background(), cur)
	if err != nil {
		t.Fatal(err)
	}
	return ch, next
}

// The steps3 session replayed as the CLI wrote it (liveness/
// timeline-steps3-delay3-gated.txt): the model turn lands first, then the
// same id again with its finished call (recordToolCalls re-appends the
// last message; pushMessage appends, never rewrites). Changes reads the
// appended lines only, keeps the turn's row id, waits for a torn line.
func TestChangesFollowAReplayedSession(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-52f24ebd.jsonl")
	writeFile(t, file, bytes.Join(lines[:2], nil)) // header and the context checkpoint
	src := open(t, dir)
	cur, err := src.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The prompt and its patch: the run, no step.
	appendFile(t, file, bytes.Join(lines[2:4], nil))
	ch, cur := changes(t, src, cur)
	if len(ch.Steps) != 0 || len(ch.Runs) != 1 || ch.Runs[0].Goal != "Three slow gated steps. [[mock:steps=3,delay=3]]" ||
		ch.Runs[0].Status != store.StatusRunning {
		t.Fatalf("after the prompt: %+v", ch)
	}
	// The model turn, half written: nothing until its newline lands.
	half := len(lines[4]) / 2
	appendFile(t, file, lines[4][:half])
	if ch, again := changes(t, src, cur); !ch.Empty() || !reflect.DeepEqual(again, cur) {
		t.Fatalf("a torn line was reported: %+v", ch)
	}
	appendFile(t, file, lines[4][half:])
	ch, cur = changes(t, src, cur)
	if len(ch.Steps) != 1 || ch.Steps[0].Number != 1 || ch.Steps[0].ToolCall != "" || len(ch.Calls) != 1 ||
		*ch.Calls[0].PromptTokens != 1200 {
		t.Fatalf("the turn: %+v", ch)
	}
	row := ch.Steps[0].RowID
	// The same id again with its call and result, the result sent back.
	appendFile(t, file, bytes.Join(lines[5:8], nil))
	before := cur
	ch, cur = changes(t, src, cur)
	if len(ch.Steps) != 1 || ch.Steps[0].RowID != row || ch.Steps[0].Number != 1 ||
		!strings.HasPrefix(ch.Steps[0].ToolCall, "run_shell_command ") || ch.Steps[0].ResultHead != "Output: hi 1" {
		t.Fatalf("the finished call: %+v", ch.Steps)
	}
	// A cursor is a value: read from again, it gives the same changes.
	if again, _ := changes(t, src, before); !reflect.DeepEqual(again.Steps, ch.Steps) {
		t.Errorf("the same cursor read twice: %+v then %+v", ch.Steps, again.Steps)
	}
	// The rest of the session: the next turns get the next numbers, and the
	// answer finishes the run.
	appendFile(t, file, bytes.Join(lines[8:], nil))
	ch, _ = changes(t, src, cur)
	var nums []int
	for _, s := range ch.Steps {
		nums = append(nums, s.Number)
	}
	if !reflect.DeepEqual(nums, []int{2, 2, 3, 3, 4}) {
		t.Errorf("step numbers %v", nums)
	}
	if r := ch.Runs[len(ch.Runs)-1]; r.Status != store.StatusCompleted {
		t.Errorf("after the answer: %s", r.Status)
	}
	// What Changes reported folds onto what Steps reads, row for row.
	steps, _ := src.Steps(context.Background(), "52f24ebd-9acb-4c90-9fe4-af37c29da39e")
	if len(steps) != 4 || steps[0].RowID != row {
		t.Errorf("steps %+v", steps)
	}
}

// A cursor taken by Head on a file no read has folded numbers the turns
// after it from the ones before.
func TestChangesFromHeadNumberOnwards(t *testing.T) {
	lines := fixtureLines(t, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-52f24ebd.jsonl")
	writeFile(t, file, bytes.Join(lines[:12], nil))
	src := open(t, dir)
	cur, _ := src.Head(context.Background())
	appendFile(t, file, bytes.Join(lines[12:], nil))
	ch, _ := changes(t, src, cur)
	if len(ch.Steps) == 0 || ch.Steps[len(ch.Steps)-1].Number != 4 {
		t.Fatalf("steps %+v, want the answer as step 4", ch.Steps)
	}
}

// A sub-agent's file appearing under its session's directory is a new run
// with its parent; a file replaced or cut short is a Reset; so is a rewind
// of messages already read (rewindTo drops them in the CLI's own load).
func TestChangesNewSubAgentResetAndRewind(t *testing.T) {
	root, mainFile, _, subFile := project(t)
	sub, _ := os.ReadFile(subFile)
	if err := os.RemoveAll(filepath.Dir(subFile)); err != nil {
		t.Fatal(err)
	}
	src := open(t, root)
	cur, _ := src.Head(context.Background())
	writeFile(t, subFile, sub)
	ch, cur := changes(t, src, cur)
	rows := map[int64]int{}
	for _, s := range ch.Steps {
		rows[s.RowID] = s.Number
	}
	// Two turns, each written twice (the second time with its call).
	if len(ch.Runs) != 1 || ch.Runs[0].ID != subID || ch.Runs[0].ParentID != mainID || len(ch.Steps) != 4 || len(rows) != 2 {
		t.Fatalf("the sub-agent's file: %d runs %+v, rows %v", len(ch.Runs), ch.Runs, rows)
	}
	// Read whole before the rewind: the rewind then extends that read.
	if steps, _ := src.Steps(context.Background(), mainID); len(steps) != 2 {
		t.Fatalf("before the rewind %d steps", len(steps))
	}
	appendFile(t, mainFile, []byte(`{"$rewindTo":"7be93f87-678e-4b4b-abdc-7b0a09afacbd"}`+"\n"))
	if ch, _ := changes(t, src, cur); !ch.Reset {
		t.Fatalf("a rewind of a shown message: %+v", ch)
	}
	steps, _ := src.Steps(context.Background(), mainID)
	if len(steps) != 1 {
		t.Errorf("after the rewind %d steps, want the answer dropped", len(steps))
	}
	cur, _ = src.Head(context.Background())
	b, _ := os.ReadFile(mainFile)
	writeFile(t, mainFile+".new", b[:len(b)/2])
	if err := os.Rename(mainFile+".new", mainFile); err != nil {
		t.Fatal(err)
	}
	if ch, _ := changes(t, src, cur); !ch.Reset {
		t.Fatalf("a replaced file: %+v", ch)
	}
	// The replaced file is read again, not extended: its first turn only
	// (the cut is inside the re-appended turn, torn, so not read).
	if steps, _ := src.Steps(context.Background(), mainID); len(steps) != 1 || steps[0].ToolCall != "" {
		t.Errorf("after the file was replaced: %+v", steps)
	}
}

// The status is the newest message's: a turn with no text whose calls have
// not been written yet (recordToolCalls writes them when they finish) is
// still going; a turn with finished calls is too; the answer ends it.
func TestStatusFollowsTheNewestMessage(t *testing.T) {
	lines := fixtureLines(t, "main-session-2026-12-04T18-39-cc39e4e9.jsonl")
	dir := t.TempDir()
	file := filepath.Join(dir, "chats", "session-2026-12-04T18-39-cc39e4e9.jsonl")
	want := []struct {
		upto   int
		status store.Status
	}{
		{5, store.StatusRunning},    // the invoke_agent turn, its call not written yet
		{8, store.StatusRunning},    // the call finished, its result sent back
		{11, store.StatusCompleted}, // the answer
	}
	from := 0
	for _, w := range want {
		if from == 0 {
			writeFile(t, file, bytes.Join(lines[:w.upto], nil))
		} else {
			appendFile(t, file, bytes.Join(lines[from:w.upto], nil))
		}
		from = w.upto
		if r := runsByID(t, open(t, dir))[mainID]; r.Status != w.status {
			t.Errorf("after %d lines: %s, want %s", w.upto, r.Status, w.status)
		}
	}
}
