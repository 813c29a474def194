package codex_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// fixtureLines is a fixture rollout's lines, each with its newline.
func fixtureLines(t *testing.T, id string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// sessionsTree writes lines as a rollout where Codex puts it, in a day
// directory under sessions/, and returns the sessions directory and file.
func sessionsTree(t *testing.T, id string, lines [][]byte) (root, file string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "sessions")
	day := filepath.Join(root, "2026", "12", "04")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(day, "rollout-2026-12-04T18-35-49-"+id+".jsonl")
	if err := os.WriteFile(file, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, file
}

func appendTo(t *testing.T, file string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestTailAppendedTurnReachesChanges follows the three-step rollout as
// Codex wrote it (docs: liveness/timeline-steps3-delay3.txt): the call and
// its usage record land first, the output and token_count after. The
// committed row goes out once its call is answered (a pending placeholder
// before it, with a smaller row id); the usage as soon as it is written.
func TestTailAppendedTurnReachesChanges(t *testing.T) {
	ctx := context.Background()
	lines := fixtureLines(t, steps3ID)
	// Lines 1-14: the first turn whole. 15-16: the second call and its usage.
	root, file := sessionsTree(t, steps3ID, lines[:14])
	src := open(t, root)
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || !ch.Empty() {
		t.Fatalf("nothing was written: %+v %v", ch, err)
	}
	appendTo(t, file, bytes.Join(lines[14:16], nil))
	ch, next2, err := src.Changes(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Steps) != 1 || !ch.Steps[0].Pending || ch.Steps[0].Number != 2 || ch.Steps[0].Decision != "running" ||
		len(ch.Calls) != 1 || *ch.Calls[0].TotalTokens != 1330 || ch.Calls[0].Step != 2 {
		t.Fatalf("after the second call: rows %+v calls %+v; want no committed row yet (its call runs: a pending one) and its usage", ch.Steps, ch.Calls)
	}
	placeholder := ch.Steps[0].RowID
	steps, _ := src.Steps(ctx, steps3ID)
	act, _ := src.Activity(ctx, store.ActivityQuery{RunIDs: []string{steps3ID}})
	if len(steps) != 2 || steps[0].Pending || !steps[1].Pending || steps[1].RowID != placeholder || len(act.Events) != 1 || act.Events[0].Kind != store.LiveTool || act.Events[0].Step != 2 ||
		!strings.Contains(act.Events[0].Text, "echo hi 2") || !act.Recorded.Has(store.FactRunEvents) {
		t.Fatalf("while the call runs: steps %+v activity %+v; want one committed step, the second pending, and its call running", steps, act)
	}
	appendTo(t, file, bytes.Join(lines[16:19], nil))
	ch, _, err = src.Changes(ctx, next2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Steps) != 1 || ch.Steps[0].Number != 2 || ch.Steps[0].Pending || ch.Steps[0].RowID <= placeholder || ch.Steps[0].Decision != "tool" || !strings.Contains(ch.Steps[0].ResultHead, "Chunk ID") || ch.Steps[0].Tokens != 1330 {
		t.Fatalf("after its output: rows %+v", ch.Steps)
	}
	if act, _ := src.Activity(ctx, store.ActivityQuery{RunIDs: []string{steps3ID}}); len(act.Events) != 0 {
		t.Fatalf("activity after the output: %+v", act.Events)
	}
	// A cursor is a value: the same cursor reads the same changes again.
	again, _, err := src.Changes(ctx, next2)
	if err != nil || len(again.Steps) != 1 || again.Steps[0].RowID != ch.Steps[0].RowID || len(again.Calls) != 0 {
		t.Fatalf("read again from the same cursor: %+v %v", again, err)
	}
	// The rest, to task_complete: the run's status comes through Runs.
	appendTo(t, file, bytes.Join(lines[19:], nil))
	ch, _, err = src.Changes(ctx, next2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Steps) != 3 || len(ch.Runs) != 1 || ch.Runs[0].Status != store.StatusCompleted {
		t.Fatalf("to the end: rows %+v runs %+v", ch.Steps, ch.Runs)
	}
}

func TestTailNewRolloutAndReset(t *testing.T) {
	ctx := context.Background()
	lines := fixtureLines(t, steps3ID)
	root, file := sessionsTree(t, steps3ID, lines)
	src := open(t, root)
	cur, _ := src.Head(ctx)
	// A sub-agent starts: a new rollout in a new day directory.
	day := filepath.Join(root, "2026", "12", "05")
	os.MkdirAll(day, 0o755)
	child := fixtureLines(t, childID)
	if err := os.WriteFile(filepath.Join(day, "rollout-2026-12-05T00-00-00-"+childID+".jsonl"), bytes.Join(child, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || len(ch.Runs) != 1 || ch.Runs[0].ID != childID || ch.Runs[0].ParentID != parentID || len(ch.Steps) != 2 {
		t.Fatalf("a new rollout: %+v %v", ch, err)
	}
	if err := os.WriteFile(file, bytes.Join(lines[:5], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, _, err = src.Changes(ctx, next)
	if err != nil || !ch.Reset {
		t.Fatalf("a rollout cut short: %+v %v, want Reset", ch, err)
	}
}

// TestTruncatedLastLineWaits: a line without its newline is a write in
// progress; it is not read until it is whole.
func TestTruncatedLastLineWaits(t *testing.T) {
	ctx := context.Background()
	lines := fixtureLines(t, steps3ID)
	last := lines[len(lines)-1] // task_complete
	half := len(last) / 2
	root, file := sessionsTree(t, steps3ID, append(append([][]byte(nil), lines[:len(lines)-1]...), last[:half]))
	src := open(t, root)
	runs := runsByID(t, src)
	if r := runs[steps3ID]; r.Status != store.StatusRunning || len(src.Problems()) != 0 {
		t.Fatalf("half a task_complete: status %q problems %v", r.Status, src.Problems())
	}
	cur, _ := src.Head(ctx)
	appendTo(t, file, last[half:len(last)-1]) // all but the newline
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || len(ch.Runs) != 0 {
		t.Fatalf("still no newline: %+v %v", ch.Runs, err)
	}
	appendTo(t, file, []byte("\n"))
	ch, _, err = src.Changes(ctx, next)
	if err != nil || len(ch.Runs) != 1 || ch.Runs[0].Status != store.StatusCompleted || len(src.Problems()) != 0 {
		t.Fatalf("the line whole: %+v %v problems %v", ch.Runs, err, src.Problems())
	}
}

// TestMalformedLineIsOneProblem: a damaged line is one problem naming the
// file and line; every other line still shows.
func TestMalformedLineIsOneProblem(t *testing.T) {
	lines := fixtureLines(t, steps3ID)
	bad := append(append(append([][]byte(nil), lines[:15]...), []byte("{\"type\":\"response_item\",\"payload\":{\"type\":\"func\n")), lines[15:]...)
	root, file := sessionsTree(t, steps3ID, bad)
	src := open(t, root)
	steps, err := src.Steps(context.Background(), steps3ID)
	if err != nil || len(steps) != 4 {
		t.Fatalf("steps %+v %v: want all four around the bad line", steps, err)
	}
	runs := runsByID(t, src)
	probs := src.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), file) || !strings.Contains(probs[0].Error(), "line 16") {
		t.Fatalf("problems %v: want one naming %s line 16", probs, file)
	}
	if runs[steps3ID].Status != store.StatusCompleted {
		t.Errorf("run %+v", runs[steps3ID])
	}
}

// TestBigRolloutListsFromHeadAndTail: a rollout past the whole-read limit
// lists from its head (who, the prompt) and its tail (its status and the
// running token total) without the middle being read; its steps are
// counted when asked for.
func TestBigRolloutListsFromHeadAndTail(t *testing.T) {
	lines := fixtureLines(t, steps3ID)
	// world_state records are not read: filler the size of a long session.
	filler := []byte(`{"timestamp":"2026-12-04T18:35:50.000Z","type":"world_state","payload":{"full":false,"state":{"pad":"` + strings.Repeat("x", 4000) + `"}}}` + "\n")
	var big [][]byte
	big = append(big, lines[:14]...)
	for range 600 { // about 2.4 MB
		big = append(big, filler)
	}
	big = append(big, lines[14:]...)
	root, _ := sessionsTree(t, steps3ID, big)
	src := open(t, root)
	r := runsByID(t, src)[steps3ID]
	if r.StatsKnown || r.Status != store.StatusCompleted || r.Summary == nil || r.Summary.Tokens != 5520 || r.Goal != "Three slow steps. [[mock:steps=3,delay=3]]" {
		t.Fatalf("a big rollout's run: %+v summary %+v", r, r.Summary)
	}
	st, err := src.RunStats(context.Background(), []string{steps3ID})
	if err != nil || st[steps3ID].Steps != 4 || st[steps3ID].Tokens != 5520 {
		t.Fatalf("its stats %+v %v", st, err)
	}
}

// TestBigRolloutListsItsModelNowFromItsTail: a big rollout lists with the
// model of its last turn_context, as a whole read says it (RunStats), and
// its head is read only up to the session's prompt and model: a damaged
// line further in is a problem once the session is read whole, not when
// it is listed. On main the list showed the model as of the head's
// first MiB, and read all of that MiB.
func TestBigRolloutListsItsModelNowFromItsTail(t *testing.T) {
	lines := fixtureLines(t, steps3ID)
	filler := []byte(`{"timestamp":"2026-12-04T18:35:50.000Z","type":"world_state","payload":{"full":false,"state":{"pad":"` + strings.Repeat("x", 4000) + `"}}}` + "\n")
	later := bytes.ReplaceAll(lines[5], []byte("gpt-5-mock"), []byte("gpt-5-later"))
	if !bytes.Contains(lines[5], []byte(`"type":"turn_context"`)) || bytes.Equal(later, lines[5]) {
		t.Fatalf("line 6 is not the turn_context naming the model: %.200s", lines[5])
	}
	var big [][]byte
	big = append(big, lines[:14]...)
	for i := range 600 { // about 2.4 MB
		if i == 50 {
			big = append(big, []byte("{\"type\":\"world_state\",\"payload\":{\"full\"\n"))
		}
		big = append(big, filler)
	}
	big = append(big, later)
	big = append(big, lines[14:]...)
	root, _ := sessionsTree(t, steps3ID, big)
	src := open(t, root)
	r := runsByID(t, src)[steps3ID]
	if r.StatsKnown || r.Status != store.StatusCompleted || r.Goal != "Three slow steps. [[mock:steps=3,delay=3]]" {
		t.Fatalf("a big rollout's run: %+v", r)
	}
	st, err := src.RunStats(context.Background(), []string{steps3ID})
	if err != nil || st[steps3ID].Provider != "mock/gpt-5-later" {
		t.Fatalf("its stats %+v %v", st, err)
	}
	if r.Provider != st[steps3ID].Provider {
		t.Errorf("listed with %q, read whole %q: the list shows the model the session uses now", r.Provider, st[steps3ID].Provider)
	}
	// RunStats read it whole: now the damaged line is one problem.
	if probs := src.Problems(); len(probs) != 1 || !strings.Contains(probs[0].Error(), "line 65") {
		t.Errorf("after a whole read, problems %v: want line 65's", probs)
	}
	if probs := open(t, root).Problems(); len(probs) != 0 {
		t.Errorf("a fresh source has problems %v", probs)
	}
	src2 := open(t, root)
	runsByID(t, src2)
	if probs := src2.Problems(); len(probs) != 0 {
		t.Errorf("listing read the head past the prompt: problems %v", probs)
	}
}

// TestReadAgainFoldsOnlyWhatWasAppended: a rollout read whole again (a
// live session's steps, activity and step detail after each line) is
// folded on from where the last read ended; what it says is what a fresh
// read says, line numbers of problems included, and a rollout replaced or
// cut short is read from its start.
func TestReadAgainFoldsOnlyWhatWasAppended(t *testing.T) {
	ctx := context.Background()
	lines := fixtureLines(t, steps3ID)
	root, file := sessionsTree(t, steps3ID, lines[:12])
	src := open(t, root)
	for _, cut := range []int{12, 15, 16, len(lines)} {
		if cut > 12 {
			appendTo(t, file, bytes.Join(lines[12:cut], nil))
		}
		if cut == 16 {
			appendTo(t, file, []byte("{\"type\":\"response_item\",\"payload\":{\"type\":\"func\n"))
		}
		got, err := src.Steps(ctx, steps3ID)
		if err != nil {
			t.Fatal(err)
		}
		fresh := open(t, root)
		want, err := fresh.Steps(ctx, steps3ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after %d lines, read again: %+v\nread fresh: %+v", cut, got, want)
		}
		if fmt.Sprint(src.Problems()) != fmt.Sprint(fresh.Problems()) {
			t.Errorf("after %d lines, problems %v, fresh %v", cut, src.Problems(), fresh.Problems())
		}
	}
	// Replaced by a shorter rollout: read from its start.
	if err := os.WriteFile(file+".new", bytes.Join(lines[:10], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
	got, _ := src.Steps(ctx, steps3ID)
	want, _ := open(t, root).Steps(ctx, steps3ID)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 1 {
		t.Errorf("replaced: %+v, fresh %+v", got, want)
	}
}
