package claudecode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// The fixture session: a parent that spawns a sub-agent (Agent call
// toolu_e89e3a671ec9422db0ac), then two text turns; each turn's message is
// written a line per content block, its usage repeated on each.
func TestFixtureSessionAndSubAgent(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	for _, path := range []string{cfg, filepath.Join(cfg, "projects"), filepath.Join(cfg, "projects", "-home-dev-work-claude")} {
		src := open(t, path)
		runs := runsByID(t, src)
		root, child := runs[sid], runs["agent-adacfd069ace754ac"]
		if len(runs) != 2 || root.ID == "" || child.ParentID != sid || child.Depth != 1 {
			t.Fatalf("%s: runs %+v", path, runs)
		}
		if !strings.HasPrefix(root.Goal, "Delegate to a sub-agent.") || root.Workspace != "/home/dev/work/claude" {
			t.Errorf("root goal %q workspace %q", root.Goal, root.Workspace)
		}
		if child.Status != store.StatusCompleted { // its meta says finished
			t.Errorf("child status %s", child.Status)
		}
		// No registry entry and the session at rest: finished.
		if root.Status != store.StatusCompleted || root.Outcome != store.OutcomeFinished || root.Lease != nil {
			t.Errorf("root %s %s lease %v", root.Status, root.Outcome, root.Lease)
		}
		steps, err := src.Steps(ctx, sid)
		must(t, err)
		if len(steps) != 3 || steps[0].Decision != "tool_use" || !strings.HasPrefix(steps[0].ToolCall, "Agent ") ||
			!strings.HasPrefix(steps[0].ResultHead, "Async agent launched successfully.") || steps[0].Tokens != 1230 {
			t.Fatalf("steps %+v", steps)
		}
		calls, err := src.ProviderCalls(ctx, sid)
		must(t, err)
		if len(calls) != 3 || *calls[0].PromptTokens != 1200 || *calls[0].CompletionTokens != 30 || *calls[0].CacheReadTokens != 0 ||
			calls[0].Model != "claude-opus-5-5" {
			t.Fatalf("calls %+v", calls)
		}
		d, err := src.StepDetail(ctx, sid, steps[0].RowID)
		must(t, err)
		if len(d.Tools) != 1 || d.Tools[0].ID != "toolu_e89e3a671ec9422db0ac" || d.Tools[0].Name != "Agent" || !strings.Contains(d.Result, "agentId: adacfd069ace754ac") {
			t.Errorf("detail %+v", d)
		}
		ev, err := src.AgentEvents(ctx, sid)
		must(t, err)
		if len(ev) != 1 || ev[0].ChildRunID != "agent-adacfd069ace754ac" || ev[0].Kind != store.AgentSpawn {
			t.Errorf("agent events %+v", ev)
		}
		if ro, why := src.ReadOnly(); !ro || why != NotDecided {
			t.Errorf("read-only %v %q", ro, why)
		}
	}
}

// A sub-agent spawned by a sub-agent (spawnDepth 2) is the child of the
// sub-agent whose transcript holds the spawning call.
func TestNestedSubAgent(t *testing.T) {
	cfg, sid := fixtureStore(t)
	sub := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid, "subagents")
	appendTo(t, filepath.Join(sub, "agent-adacfd069ace754ac.jsonl"),
		`{"type":"assistant","message":{"id":"n1","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_nested","name":"Agent","input":{}}]}}`+"\n")
	writeFile(t, filepath.Join(sub, "agent-b1.jsonl"), `{"type":"user","sessionId":"`+sid+`","message":{"role":"user","content":"deeper"}}`+"\n")
	writeFile(t, filepath.Join(sub, "agent-b1.meta.json"), `{"toolUseId":"toolu_nested","spawnDepth":2}`)
	runs := runsByID(t, open(t, cfg))
	if r := runs["agent-b1"]; r.ParentID != "agent-adacfd069ace754ac" || r.Depth != 2 {
		t.Fatalf("nested sub-agent %+v", r)
	}
}
