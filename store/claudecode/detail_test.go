package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The detail of a step of a live session is read on from where the last
// detail's read stopped: each new turn's detail is its own, the placeholder's
// as it stands and the committed turn's once its result is in; a transcript
// replaced by another file is read again, not answered from the old one.
func TestDetailFollowsALiveSession(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	steps, err := src.Steps(ctx, sid)
	must(t, err)
	first, err := src.StepDetail(ctx, sid, steps[0].RowID)
	must(t, err)
	if first.Step.Number != 1 {
		t.Fatalf("the first step's detail: %+v", first.Step)
	}

	appendTo(t, file, toolTurn)
	steps, err = src.Steps(ctx, sid)
	must(t, err)
	open := steps[len(steps)-1]
	d, err := src.StepDetail(ctx, sid, open.RowID)
	must(t, err)
	if d.Step.Number != 4 || !strings.Contains(d.Result, "running (no result yet)") || d.ToolCallFull != `Bash {"command":"ls"}` {
		t.Fatalf("the open turn's detail: %+v", d)
	}
	appendTo(t, file, toolResult)
	steps, err = src.Steps(ctx, sid)
	must(t, err)
	done := steps[len(steps)-1]
	if done.Pending {
		t.Fatalf("the turn with its result is still pending: %+v", done)
	}
	for _, row := range []int64{open.RowID, done.RowID} {
		d, err = src.StepDetail(ctx, sid, row)
		must(t, err)
		if d.Step.Number != 4 || d.Result != "a.txt" {
			t.Fatalf("row %d after the result: %+v", row, d)
		}
	}
	if d, err := src.StepDetail(ctx, sid, steps[1].RowID); err != nil || d.Step.Number != 2 {
		t.Fatalf("an older step after the cache moved on: %+v %v", d.Step, err)
	}

	// The same name, another file: a new inode, the turn another call.
	body, err := os.ReadFile(file)
	must(t, err)
	swapped := strings.Replace(string(body), `"command":"ls"`, `"command":"pwd"`, 1)
	must(t, os.WriteFile(file+".new", []byte(swapped), 0o644))
	must(t, os.Rename(file+".new", file))
	d, err = src.StepDetail(ctx, sid, done.RowID)
	must(t, err)
	if d.ToolCallFull != `Bash {"command":"pwd"}` {
		t.Fatalf("a replaced transcript's detail came from the old file: %+v", d.ToolCallFull)
	}
}
