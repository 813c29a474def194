package geminicli_test

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
	"github.com/vigil-run/vigil/store/geminicli"
)

var (
	// Gemini counts the cached tokens inside the input and reports no cache
	// write; the server's total is input + output.
	toolUsage  = modelserver.Usage{Input: 1200, Output: 30, CacheRead: 100}
	finalUsage = modelserver.Usage{Input: 1300, Output: 40, CacheRead: 200}
	subUsage   = modelserver.Usage{Input: 900, Output: 20, CacheRead: 10}
)

// storeOf opens the chats the CLI wrote under the run's HOME, found where
// DefaultPaths says the CLI keeps them.
func storeOf(t *testing.T, home string) (store.Source, error) {
	t.Helper()
	paths := geminicli.DefaultPaths(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if len(paths) != 1 {
		t.Fatalf("DefaultPaths %v", paths)
	}
	src, err := store.Open(paths[0], store.Options{ReadOnly: true})
	if err == nil {
		t.Cleanup(func() { src.Close() })
	}
	return src, err
}

// wantUsage compares a turn's provider call with what the server reported.
func wantUsage(t *testing.T, where string, pc store.ProviderCall, u modelserver.Usage) {
	t.Helper()
	eq := func(p *int64, v int) bool { return p != nil && *p == int64(v) }
	if !eq(pc.PromptTokens, u.Input) || !eq(pc.CompletionTokens, u.Output) || !eq(pc.CacheReadTokens, u.CacheRead) ||
		!eq(pc.TotalTokens, u.Input+u.Output) || pc.CacheWriteTokens != nil {
		t.Errorf("%s: tokens in %v out %v cache read %v total %v cache write %v, the server reported %+v", where,
			deref(pc.PromptTokens), deref(pc.CompletionTokens), deref(pc.CacheReadTokens), deref(pc.TotalTokens), pc.CacheWriteTokens, u)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// The real gemini, headless against the project's model server: a shell
// call, its result, then an answer the server holds back. While it is held
// the run shows as running with the call finished; after, as finished, the
// tokens equal to the server's; a line appended to the session reaches
// Changes.
func TestRealGeminiShellCallLiveThenFinished(t *testing.T) {
	a := agentcli.Need(t, "gemini-cli")
	const slow = 6 * time.Second
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "run_shell_command", Args: map[string]any{"command": "sleep 3 && echo hi > out.txt", "description": "write out.txt"}}}, Usage: toolUsage},
		{Text: "Wrote out.txt.", Usage: finalUsage, Delay: slow},
	}}})
	run := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 120*time.Second)
	ctx := context.Background()

	// While the shell call sleeps: the turn is on disk without its call
	// (the CLI writes calls as they finish), and the run is running.
	var during store.Run
	var duringSteps []store.Step
	for !run.Exited() && len(duringSteps) == 0 {
		if served := srv.Served(); len(served) > 0 {
			if _, done := srv.ToolResult(served[0]); done {
				break
			}
		}
		if src, err := storeOf(t, run.Home); err == nil {
			if runs, _ := src.Runs(ctx); len(runs) == 1 {
				during = runs[0]
				duringSteps, _ = src.Steps(ctx, during.ID)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(duringSteps) != 1 || duringSteps[0].ToolCall != "" || during.Status != store.StatusRunning {
		t.Fatalf("while the shell call ran: %s, steps %+v", during.Status, duringSteps)
	}

	var asked time.Time
	for asked.IsZero() && !run.Exited() {
		for _, q := range srv.Requests() {
			if q.Conversation == 0 && q.Turn == 1 {
				asked = q.At
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if asked.IsZero() {
		r := run.Wait()
		t.Fatalf("gemini exited before asking for its answer: %v\n%s", r.Err, r.Stderr)
	}
	callID := srv.Served()[0]

	// While the answer is held back.
	var live store.Run
	var tool store.StepDetail
	var cur store.Cursor
	for time.Since(asked) < slow/2 && firstCall(tool) == "" {
		src, err := storeOf(t, run.Home)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cur, _ = src.Head(ctx)
		runs, _ := src.Runs(ctx)
		if len(runs) == 1 {
			live = runs[0]
			if ds := details(t, src, live.ID); len(ds) > 0 && len(ds[0].Tools) == 1 {
				tool = ds[0]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if run.Exited() {
		t.Fatal("gemini ended before the held answer: the live check did not run")
	}
	if firstCall(tool) != callID || tool.Tools[0].Name != "run_shell_command" || strings.Contains(tool.Result, "(running)") {
		t.Fatalf("while live: the call %q (served %q) %+v result %q", firstCall(tool), callID, tool.Tools, tool.Result)
	}
	if live.Status != store.StatusRunning || live.Ended() {
		t.Errorf("while the answer is held back: %s %s", live.Status, live.Outcome)
	}

	r := run.Wait()
	if r.Err != nil {
		t.Fatalf("gemini: %v\n%s", r.Err, r.Stderr)
	}
	src, err := storeOf(t, r.Home)
	if err != nil {
		t.Fatal(err)
	}
	// The rows the answer added reach a cursor taken while it was live.
	ch, _, err := src.Changes(ctx, cur)
	if err != nil || ch.Reset || len(ch.Steps) == 0 || ch.Steps[len(ch.Steps)-1].Number != 2 {
		t.Fatalf("changes after the answer: %+v %v", ch, err)
	}
	runs, _ := src.Runs(ctx)
	if len(runs) != 1 || runs[0].Status != store.StatusCompleted || runs[0].Goal != "Write hi to out.txt. [vigil:main]" {
		t.Fatalf("after: %+v", runs)
	}
	id := runs[0].ID
	ds := details(t, src, id)
	if len(ds) != 2 || ds[1].TurnText != "Wrote out.txt." || len(ds[0].Tools) != 1 || ds[0].Tools[0].ID != callID {
		t.Fatalf("steps %+v", ds)
	}
	// The server got the functionResponse's response; its output is the result.
	got, ok := srv.ToolResult(callID)
	var resp struct{ Output string }
	if !ok || json.Unmarshal([]byte(got), &resp) != nil || resp.Output == "" || !strings.Contains(ds[0].Result, resp.Output) {
		t.Errorf("the call's result %q, the server got %q", ds[0].Result, got)
	}
	calls, _ := src.ProviderCalls(ctx, id)
	if len(calls) != 2 {
		t.Fatalf("provider calls %+v", calls)
	}
	wantUsage(t, "the tool turn", calls[0], toolUsage)
	wantUsage(t, "the answer", calls[1], finalUsage)

	// A line appended to the session reaches Changes.
	head, _ := src.Head(ctx)
	files, _ := filepath.Glob(filepath.Join(r.Home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("chat files %v", files)
	}
	appendFile(t, files[0], []byte(`{"id":"appended","timestamp":"2026-12-04T18:39:50.007Z","type":"gemini","content":"more","tokens":{"input":7,"output":1,"cached":0,"total":8},"model":"m"}`+"\n"))
	ch, _, err = src.Changes(ctx, head)
	if err != nil || len(ch.Steps) != 1 || ch.Steps[0].Number != 3 || ch.Steps[0].Tokens != 8 {
		t.Fatalf("the appended line: %+v %v", ch, err)
	}
}

// firstCall is the id of a step's first tool call ("" when it made none).
func firstCall(d store.StepDetail) string {
	if len(d.Tools) == 0 {
		return ""
	}
	return d.Tools[0].ID
}

// The real gemini delegating to its generalist sub-agent: the sub-agent's
// file under the session's directory is a child run, its shell call with
// its result and the tokens the server reported.
func TestRealGeminiSubAgentTree(t *testing.T) {
	a := agentcli.Need(t, "gemini-cli")
	subPrompt := "Write sub to sub.txt. [vigil:sub]"
	srv := modelserver.Start(t, modelserver.Script{
		{Match: "[vigil:main]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "invoke_agent", Args: map[string]any{"agent_name": "generalist", "prompt": subPrompt}}}, Usage: toolUsage},
			{Text: "All done.", Usage: finalUsage}}},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "run_shell_command", Args: map[string]any{"command": "echo sub > sub.txt", "description": "write sub.txt"}}}, Usage: subUsage},
			// A Gemini sub-agent ends only by calling complete_task.
			{Calls: []modelserver.Call{{Name: "complete_task", Args: map[string]any{"result": map[string]any{"response": "Wrote sub.txt."}}}}}}},
	})
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	if r.Err != nil {
		t.Fatalf("gemini: %v\n%s", r.Err, r.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Work, "sub.txt")); strings.TrimSpace(string(b)) != "sub" {
		t.Fatalf("sub.txt %q", b)
	}
	src, err := storeOf(t, r.Home)
	if err != nil {
		t.Fatal(err)
	}
	runs := runsByID(t, src)
	var parent, child store.Run
	for _, run := range runs {
		if run.ParentID == "" {
			parent = run
		} else {
			child = run
		}
	}
	if len(runs) != 2 || child.ParentID != parent.ID || child.Goal != subPrompt {
		t.Fatalf("tree %+v", runs)
	}
	for _, run := range runs {
		if run.Status != store.StatusCompleted {
			t.Errorf("run %s (%s) %s after the CLI exited", run.ID, run.TurnKind, run.Status)
		}
	}
	pds := details(t, src, parent.ID)
	if len(pds) == 0 || len(pds[0].Tools) != 1 || pds[0].Tools[0].Name != "invoke_agent" || strings.Contains(pds[0].Result, "(running)") {
		t.Fatalf("the session's spawn %+v", pds)
	}
	cds := details(t, src, child.ID)
	var ran bool
	for _, d := range cds {
		if len(d.Tools) == 1 && d.Tools[0].Name == "run_shell_command" {
			got, ok := srv.ToolResult(d.Tools[0].ID)
			ran = ok && strings.Contains(d.Result, "[run_shell_command success]") && got != ""
			wantUsage(t, "the sub-agent's shell turn", d.ProviderCalls[0], subUsage)
		}
	}
	if !ran {
		t.Fatalf("the sub-agent's shell call with its result: %+v", cds)
	}
}
