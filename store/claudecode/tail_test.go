package claudecode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

const (
	toolTurn   = `{"type":"assistant","timestamp":"2026-12-04T18:40:00Z","message":{"id":"msg_t1","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_x","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}` + "\n"
	toolResult = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"a.txt"}]}}` + "\n"
)

// A line appended to the session reaches Changes; a turn whose call has
// no result yet is running in Steps and comes from Changes once its result
// is in; a last line without its newline is not read until it has one.
func TestTailAppendedLines(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	cur, err := src.Head(ctx)
	must(t, err)
	ch, cur2, err := src.Changes(ctx, cur)
	must(t, err)
	if len(ch.Steps) != 0 {
		t.Fatalf("changes before any write: %+v", ch.Steps)
	}

	appendTo(t, file, toolTurn)
	steps, err := src.Steps(ctx, sid)
	must(t, err)
	last := steps[len(steps)-1]
	if len(steps) != 4 || last.Decision != "running" || !last.Pending || last.ToolCall != `Bash {"command":"ls"}` {
		t.Fatalf("the open call: %+v", last)
	}
	st, err := src.RunStats(ctx, []string{sid})
	must(t, err)
	// The open turn counts as a step; its tokens come with its committed
	// row, past Through, so a reader adding that row counts them once.
	if st[sid].Steps != 4 || st[sid].Tokens != 1230+1330+1330 || st[sid].Through >= last.RowID {
		t.Fatalf("counts with the open turn: %+v", st[sid])
	}
	ch, cur3, err := src.Changes(ctx, cur2)
	must(t, err)
	if len(ch.Steps) != 1 || !ch.Steps[0].Pending || ch.Steps[0].RowID != last.RowID || ch.Steps[0].Decision != "running" {
		t.Fatalf("a turn still waiting for its result is not its placeholder: %+v", ch.Steps)
	}

	half := toolResult[:40]
	appendTo(t, file, half)
	ch, cur4, err := src.Changes(ctx, cur3)
	must(t, err)
	if len(ch.Steps) != 0 || len(src.Problems()) != 0 {
		t.Fatalf("a line still being written was read: %+v %v", ch.Steps, src.Problems())
	}
	appendTo(t, file, toolResult[40:])
	ch, _, err = src.Changes(ctx, cur4)
	must(t, err)
	if len(ch.Steps) != 1 || ch.Steps[0].Number != 4 || ch.Steps[0].ResultHead != "a.txt" || ch.Steps[0].Tokens != 19 || ch.Steps[0].Decision != "tool_use" ||
		ch.Steps[0].Pending || ch.Steps[0].RowID <= last.RowID {
		t.Fatalf("the finished turn: %+v", ch.Steps)
	}
	if len(ch.Calls) != 1 || *ch.Calls[0].CacheWriteTokens != 4 || len(ch.Context) != 1 || *ch.Context[0].Reported != 17 {
		t.Fatalf("calls %+v context %+v", ch.Calls, ch.Context)
	}
	// The cursor given is never changed: reading from it again gives the same.
	again, _, err := src.Changes(ctx, cur4)
	must(t, err)
	if len(again.Steps) != 1 || again.Steps[0] != ch.Steps[0] {
		t.Fatalf("a cursor read twice: %+v then %+v", ch.Steps, again.Steps)
	}
	st, err = src.RunStats(ctx, []string{sid})
	must(t, err)
	if st[sid].Steps != 4 || st[sid].Tokens != 1230+1330+1330+19 {
		t.Fatalf("counts read on: %+v", st[sid])
	}
	// A new sub-agent is a new child run and a spawn.
	sub := filepath.Join(filepath.Dir(file), sid, "subagents", "agent-b2.jsonl")
	must(t, os.WriteFile(sub, []byte(`{"type":"user","sessionId":"`+sid+`","message":{"role":"user","content":"go"}}`+"\n"+toolTurn), 0o644))
	ch, cur5, err := src.Changes(ctx, cur4)
	must(t, err)
	var child bool
	for _, r := range ch.Runs {
		child = child || (r.ID == "agent-b2" && r.ParentID == sid && r.Depth == 1 && r.Goal == "go")
	}
	if !child || len(ch.AgentEvents) != 1 || ch.AgentEvents[0].ChildRunID != "agent-b2" {
		t.Fatalf("a new sub-agent: runs %+v events %+v", ch.Runs, ch.AgentEvents)
	}
	must(t, os.Remove(sub))
	ch, _, err = src.Changes(ctx, cur5)
	must(t, err)
	if !ch.Reset {
		t.Fatalf("a removed transcript: no reset")
	}
	// A replaced file is a reset.
	b, _ := os.ReadFile(file)
	must(t, os.WriteFile(file+".new", b, 0o644))
	must(t, os.Rename(file+".new", file))
	ch, _, err = src.Changes(ctx, cur4)
	must(t, err)
	if !ch.Reset {
		t.Fatalf("a replaced transcript: no reset")
	}
}

// A malformed line is one problem naming its file and line; the rest of
// the session still shows.
func TestMalformedLineIsOneProblem(t *testing.T) {
	cfg, sid := fixtureStore(t)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	appendTo(t, file, "{not json\n"+toolTurn+toolResult)
	src := open(t, cfg)
	steps, err := src.Steps(context.Background(), sid)
	must(t, err)
	if len(steps) != 4 || steps[3].ResultHead != "a.txt" {
		t.Fatalf("steps around a bad line: %+v", steps)
	}
	src.Steps(context.Background(), sid)
	probs := src.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), file+":39:") || !errors.Is(probs[0], store.ErrCorrupt) {
		t.Fatalf("problems %v", probs)
	}
}
