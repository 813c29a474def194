package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store"
)

// The Responses API reports no cache write: Codex records 0 for it.
var (
	toolUsage  = modelserver.Usage{Input: 1200, Output: 30, CacheRead: 100}
	finalUsage = modelserver.Usage{Input: 1300, Output: 40, CacheRead: 200}
	subUsage   = modelserver.Usage{Input: 900, Output: 20, CacheRead: 10}
)

// wantCall holds a step's provider call to the figures the server
// reported for that response.
func wantCall(t *testing.T, where string, d store.StepDetail, u modelserver.Usage) {
	t.Helper()
	if len(d.ProviderCalls) != 1 {
		t.Fatalf("%s: provider calls %+v", where, d.ProviderCalls)
	}
	pc := d.ProviderCalls[0]
	got := modelserver.Usage{Input: int(*pc.PromptTokens), Output: int(*pc.CompletionTokens), CacheRead: int(*pc.CacheReadTokens), CacheWrite: int(*pc.CacheWriteTokens)}
	if got != u || d.Tokens != int64(u.Input+u.Output) {
		t.Errorf("%s: usage %+v (step tokens %d), the server reported %+v", where, got, d.Tokens, u)
	}
}

// TestRealCodexShellRunLiveThenFinished runs codex exec against the model
// server: one shell call that takes a while, then an answer. While the
// call runs, the run is running (Codex records no liveness: the state is
// not known beyond that) and its call shows as running; after, the call
// has its result, the run is finished, and a cursor taken while it was
// live brings the rest through Changes.
func TestRealCodexShellRunLiveThenFinished(t *testing.T) {
	ctx := context.Background()
	a := agentcli.Need(t, "codex")
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "exec_command", Args: map[string]any{"cmd": "sleep 3; echo hi > out.txt"}}}, Usage: toolUsage},
		{Text: "Wrote out.txt.", Usage: finalUsage},
	}}})
	run := a.Start(t, srv.URL, "Write hi to out.txt slowly. [vigil:main]", 120*time.Second)
	sessions := filepath.Join(run.Home, ".codex", "sessions")

	// Wait for the call to be on disk, its result not yet.
	var src store.Source
	var runID string
	deadline := time.Now().Add(60 * time.Second)
	for runID == "" && time.Now().Before(deadline) && !run.Exited() {
		time.Sleep(50 * time.Millisecond)
		if len(run.Store()) == 0 {
			continue
		}
		if src == nil {
			s, err := store.Open(sessions, store.Options{ReadOnly: true})
			if err != nil {
				continue
			}
			src = s
			t.Cleanup(func() { src.Close() })
		}
		runs, _ := src.Runs(ctx)
		if len(runs) == 1 {
			act, _ := src.Activity(ctx, store.ActivityQuery{RunIDs: []string{runs[0].ID}})
			if len(act.Events) == 1 && act.Events[0].Kind == store.LiveTool {
				runID = runs[0].ID
			}
		}
	}
	if runID == "" {
		r := run.Wait()
		t.Fatalf("never saw the shell call running; exit %v files %v stderr %s", r.Err, r.Store(a), r.Stderr)
	}
	live := runsByID(t, src)[runID]
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if live.Status != store.StatusRunning || live.Summary != nil || store.StateOf(live, nil, false, false, time.Now()) != store.StateUnknown {
		t.Errorf("while the call runs: %+v, state %v; want running, not known beyond that", live, store.StateOf(live, nil, false, false, time.Now()))
	}
	// The call is running: live activity, and a pending step, not yet a
	// committed one.
	steps, _ := src.Steps(ctx, runID)
	act, _ := src.Activity(ctx, store.ActivityQuery{RunIDs: []string{runID}})
	if len(steps) != 1 || !steps[0].Pending || steps[0].Decision != "running" || !strings.Contains(steps[0].ToolCall, "exec_command") ||
		len(act.Events) != 1 || !strings.Contains(act.Events[0].Text, "exec_command") || act.Events[0].Step != 1 {
		t.Errorf("while the call runs: steps %+v activity %+v", steps, act.Events)
	}

	r := run.Wait()
	if r.Err != nil {
		t.Fatalf("codex exited %v: %s", r.Err, r.Stderr)
	}
	if act, _ := src.Activity(ctx, store.ActivityQuery{RunIDs: []string{runID}}); len(act.Events) != 0 {
		t.Errorf("activity after the run: %+v", act.Events)
	}
	ids := srv.Served()
	if len(ids) != 1 {
		t.Fatalf("calls served %v", ids)
	}
	out, _ := srv.ToolResult(ids[0])

	fin := runsByID(t, src)[runID]
	if fin.Status != store.StatusCompleted || fin.Outcome != store.OutcomeComplete || fin.Goal != "Write hi to out.txt slowly. [vigil:main]" {
		t.Errorf("after: %+v", fin)
	}
	steps, err = src.Steps(ctx, runID)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps %+v %v", steps, err)
	}
	d, _ := src.StepDetail(ctx, runID, steps[0].RowID)
	if len(d.Tools) != 1 || d.Tools[0].ID != ids[0] || d.Tools[0].Name != "exec_command" || steps[0].Decision != "tool" ||
		!strings.Contains(d.Result, ids[0]+": ") || !strings.Contains(d.Result, firstOutputLine(out)) {
		t.Errorf("the call %s: tools %+v decision %q result %q; the server got %q", ids[0], d.Tools, steps[0].Decision, d.Result, out)
	}
	wantCall(t, "the tool turn", d, toolUsage)
	d, _ = src.StepDetail(ctx, runID, steps[1].RowID)
	if d.TurnText != "Wrote out.txt." {
		t.Errorf("the answer: %q", d.TurnText)
	}
	wantCall(t, "the final turn", d, finalUsage)

	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	var rows []int64
	for _, row := range ch.Steps {
		rows = append(rows, row.RowID)
	}
	if len(ch.Steps) != 2 || ch.Steps[1].RowID != steps[1].RowID || len(ch.Runs) != 1 || ch.Runs[0].Status != store.StatusCompleted {
		t.Errorf("Changes from the live cursor: rows %v runs %+v; want both turns' rows (the first answered since) and the run completed", rows, ch.Runs)
	}
}

func firstOutputLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return out
}

// TestRealCodexSubAgent: the parent spawns a sub-agent (multi_agent_v1
// spawn_agent, then wait_agent); the child's rollout is a child run.
func TestRealCodexSubAgent(t *testing.T) {
	ctx := context.Background()
	a := agentcli.Need(t, "codex")
	wait := modelserver.Call{Name: "wait_agent", Namespace: "multi_agent_v1", ArgsFrom: func(h []modelserver.Item) any {
		var targets []string
		for _, it := range h {
			var out struct {
				AgentID string `json:"agent_id"`
			}
			if it.Role == "tool" && json.Unmarshal([]byte(it.Text), &out) == nil && out.AgentID != "" {
				targets = append(targets, out.AgentID)
			}
		}
		return map[string]any{"targets": targets, "timeout_ms": 60000}
	}}
	srv := modelserver.Start(t, modelserver.Script{
		{Match: "[vigil:main]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "spawn_agent", Namespace: "multi_agent_v1", Args: map[string]any{"message": "Write sub to sub.txt. [vigil:sub]"}}}, Usage: toolUsage},
			{Calls: []modelserver.Call{wait}},
			{Text: "All done."},
		}},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "exec_command", Args: map[string]any{"cmd": "echo sub > sub.txt"}}}, Usage: subUsage},
			{Text: "Wrote sub.txt."},
		}},
	})
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	if r.Err != nil {
		t.Fatalf("codex exited %v: %s", r.Err, r.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(r.Work, "sub.txt")); err != nil || strings.TrimSpace(string(b)) != "sub" {
		t.Fatalf("sub.txt %q %v", b, err)
	}
	src := open(t, filepath.Join(r.Home, ".codex"))
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v %v: want the parent and its sub-agent", runs, err)
	}
	var parent, child store.Run
	for _, run := range runs {
		if run.IsRoot() {
			parent = run
		} else {
			child = run
		}
	}
	if child.ParentID != parent.ID || parent.ID == "" || child.Depth != 1 || child.Goal != "Write sub to sub.txt. [vigil:sub]" {
		t.Fatalf("tree: parent %+v child %+v", parent, child)
	}
	evs, err := src.AgentEvents(ctx, parent.ID)
	if err != nil || len(evs) != 1 || evs[0].ChildRunID != child.ID {
		t.Errorf("spawn events %+v %v", evs, err)
	}
	steps, err := src.Steps(ctx, child.ID)
	if err != nil || len(steps) != 2 {
		t.Fatalf("child steps %+v %v", steps, err)
	}
	d, _ := src.StepDetail(ctx, child.ID, steps[0].RowID)
	if len(d.Tools) != 1 || d.Tools[0].Name != "exec_command" || strings.Contains(d.Result, "running") {
		t.Errorf("the child's shell call: %+v result %q", d.Tools, d.Result)
	}
	wantCall(t, "the child's tool turn", d, subUsage)
	psteps, _ := src.Steps(ctx, parent.ID)
	if len(psteps) == 0 {
		t.Fatal("the parent has no steps")
	}
	d, _ = src.StepDetail(ctx, parent.ID, psteps[0].RowID)
	if len(d.Tools) != 1 || d.Tools[0].Name != "multi_agent_v1.spawn_agent" || !strings.Contains(d.Result, child.ID) {
		t.Errorf("the spawn call: %+v result %q", d.Tools, d.Result)
	}
	wantCall(t, "the parent's spawn turn", d, toolUsage)
}
