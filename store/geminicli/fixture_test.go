package geminicli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/geminicli"
)

// The fixtures are what Gemini CLI 0.61.0 wrote here: a session that
// delegated to a sub-agent, and one that ran three shell calls.
func TestFixtureRunsAndTree(t *testing.T) {
	root, _, _, _ := project(t)
	src := open(t, root)
	runs := runsByID(t, src)
	if len(runs) != 3 {
		t.Fatalf("runs %v, want the two sessions and the sub-agent", runs)
	}
	main, sub, steps := runs[mainID], runs[subID], runs[stepsID]
	if main.ParentID != "" || sub.ParentID != mainID || sub.Depth != 1 || steps.ParentID != "" {
		t.Errorf("tree: main parent %q, sub parent %q depth %d, steps parent %q", main.ParentID, sub.ParentID, sub.Depth, steps.ParentID)
	}
	if main.Goal != "Delegate to a sub-agent. [[mock:sub,delay=1]]" || sub.Goal != "Run one shell command. [[mock:steps=1,cmd=echo_from_sub]]" {
		t.Errorf("goals %q, %q (the session context is not the goal)", main.Goal, sub.Goal)
	}
	for _, r := range []store.Run{main, sub, steps} {
		if r.Status != store.StatusCompleted || r.Outcome != store.OutcomeComplete || r.Summary == nil {
			t.Errorf("run %s: status %s outcome %s summary %v, want finished", r.ID, r.Status, r.Outcome, r.Summary)
		}
		if r.Workspace != "/home/dev/work/gemini" {
			t.Errorf("run %s: workspace %q, want .project_root's", r.ID, r.Workspace)
		}
	}
	if src.RecordsLeases() {
		t.Error("Gemini CLI records no process: liveness must be unknown")
	}
}

// The same message id re-appended as its tool call completes is one step
// (loadConversationRecord: messagesMap.set keeps the first place, the last
// line's fields), with its call and result joined by the call id.
func TestFixtureStepsJoinCallsAndResults(t *testing.T) {
	root, _, _, _ := project(t)
	src := open(t, root)
	ds := details(t, src, stepsID)
	if len(ds) != 4 {
		t.Fatalf("%d steps, want 3 tool turns and the answer", len(ds))
	}
	for i, d := range ds[:3] {
		n := string(rune('1' + i))
		if d.Number != i+1 || len(d.Tools) != 1 || d.Tools[0].Name != "run_shell_command" ||
			!strings.Contains(d.Tools[0].Arguments, `"echo hi `+n+`"`) {
			t.Errorf("step %d: %+v", i+1, d.Tools)
			continue
		}
		// The chat file keeps run_shell_command__<id>; the model saw <id>.
		if id := d.Tools[0].ID; strings.Contains(id, "__") || !strings.HasPrefix(id, "run_shell_command_") {
			t.Errorf("step %d: call id %q, want the wire id", i+1, id)
		}
		if !strings.Contains(d.Result, "Output: hi "+n) || d.ResultHead != "Output: hi "+n {
			t.Errorf("step %d: result %q head %q", i+1, d.Result, d.ResultHead)
		}
		if d.TurnText != "Running step "+n+"." {
			t.Errorf("step %d: turn text %q", i+1, d.TurnText)
		}
	}
	if last := ds[3]; len(last.Tools) != 0 || last.TurnText != "All done after 3 tool call(s)." {
		t.Errorf("answer step: %+v", last)
	}
	if !strings.Contains(ds[1].Prompt, "Output: hi 1") {
		t.Errorf("step 2's prompt %q, want step 1's result sent back", ds[1].Prompt)
	}
}

// Tokens are the turn's TokensSummary as written: input, output and cache
// read apart, no cache write (Gemini reports none), the total as reported.
func TestFixtureTokensAndContext(t *testing.T) {
	root, _, _, _ := project(t)
	src := open(t, root)
	ctx := context.Background()
	calls, err := src.ProviderCalls(ctx, stepsID)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := []int64{1200, 1300, 1400, 1500}
	if len(calls) != len(wantIn) {
		t.Fatalf("%d provider calls, want %d", len(calls), len(wantIn))
	}
	for i, c := range calls {
		if c.PromptTokens == nil || *c.PromptTokens != wantIn[i] || *c.CompletionTokens != 30 || *c.CacheReadTokens != 0 ||
			*c.TotalTokens != wantIn[i]+30 || c.CacheWriteTokens != nil || c.Model != "gemini-3.8-flash" || c.Step != i+1 {
			t.Errorf("call %d: %+v", i+1, c)
		}
	}
	samples, err := src.ContextSamples(ctx, stepsID)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if s.Reported == nil || *s.Reported != wantIn[i] || !s.NoEstimate {
			t.Errorf("context %d: %+v", i+1, s)
		}
	}
	st, err := src.RunStats(ctx, []string{stepsID})
	if err != nil {
		t.Fatal(err)
	}
	if got := st[stepsID]; got.Steps != 4 || got.Tokens != 1230+1330+1430+1530 {
		t.Errorf("stats %+v", got)
	}
}

// A turn that reports no tokens is "not reported", never 0.
func TestTurnWithoutTokensIsNotReported(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/chats/session-2026-12-04T18-39-aaaaaaaa.jsonl"
	writeFile(t, f, []byte(`{"sessionId":"s1","projectHash":"h","startTime":"2026-12-04T18:39:20.197Z","kind":"main"}
{"id":"u1","timestamp":"2026-12-04T18:39:20.242Z","type":"user","content":[{"text":"go"}]}
{"id":"g1","timestamp":"2026-12-04T18:39:23.322Z","type":"gemini","content":"thinking","model":"m"}
`))
	src := open(t, dir)
	calls, err := src.ProviderCalls(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].TotalTokens != nil || calls[0].PromptTokens != nil {
		t.Fatalf("calls %+v, want one with no usage", calls)
	}
	samples, _ := src.ContextSamples(context.Background(), "s1")
	if len(samples) != 0 {
		t.Errorf("samples %+v, want none reported", samples)
	}
}

// DefaultPaths honours GEMINI_CLI_HOME before HOME, as the CLI's homedir
// (packages/core/src/utils/paths.ts) does.
func TestDefaultPaths(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if got := geminicli.DefaultPaths(get); len(got) != 1 || got[0] != "/home/u/.gemini/tmp" {
		t.Errorf("HOME: %v", got)
	}
	env["GEMINI_CLI_HOME"] = "/srv/g"
	if got := geminicli.DefaultPaths(get); len(got) != 1 || got[0] != "/srv/g/.gemini/tmp" {
		t.Errorf("GEMINI_CLI_HOME: %v", got)
	}
	if got := geminicli.DefaultPaths(func(string) string { return "" }); len(got) != 0 {
		t.Errorf("no home: %v", got)
	}
}

// One chat file opens alone: a sub-agent's keeps its parent's id and its
// project's workspace.
func TestOneChatFileOpens(t *testing.T) {
	_, _, _, subFile := project(t)
	runs := runsByID(t, open(t, subFile))
	if r, ok := runs[subID]; len(runs) != 1 || !ok || r.ParentID != mainID || r.Workspace != "/home/dev/work/gemini" {
		t.Errorf("runs %+v", runs)
	}
}
