package opencode_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/opencode"
)

// The provider's figures: the chat protocol's prompt_tokens include the
// cached ones, which opencode's getUsage (packages/opencode/src/session/
// index.ts) subtracts before it stores them; vigil puts them back.
var (
	toolUsage  = modelserver.Usage{Input: 1200, Output: 30, CacheRead: 100}
	finalUsage = modelserver.Usage{Input: 1300, Output: 40, CacheRead: 200}
	subUsage   = modelserver.Usage{Input: 900, Output: 20, CacheRead: 10}
)

func openDB(t *testing.T, files []string) store.Source {
	t.Helper()
	if len(files) != 1 {
		t.Fatalf("databases %v, want one", files)
	}
	src, err := store.Open(files[0], store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if src.Format() != "opencode" {
		t.Fatalf("format %q", src.Format())
	}
	return src
}

func wantCall(t *testing.T, c store.ProviderCall, u modelserver.Usage) {
	t.Helper()
	if c.PromptTokens == nil || *c.PromptTokens != int64(u.Input) || *c.CompletionTokens != int64(u.Output) ||
		*c.CacheReadTokens != int64(u.CacheRead) || *c.CacheWriteTokens != int64(u.CacheWrite) ||
		*c.TotalTokens != int64(u.Input+u.Output) {
		t.Errorf("step %d: prompt %v completion %v cache read %v write %v total %v; the server reported %+v",
			c.Step, deref(c.PromptTokens), deref(c.CompletionTokens), deref(c.CacheReadTokens), deref(c.CacheWriteTokens), deref(c.TotalTokens), u)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRealOpencodeLiveShellRun runs the real opencode with a shell call
// that takes a while and a final turn the server holds back: while it
// runs, vigil (a reader of a database another process writes) shows the
// session running and the call running (one pending step); a cursor
// taken then brings the finished turns through Changes, which fold over
// the timeline read then as the explorer folds them, leaving nothing
// running; at the end the figures equal the server's.
func TestRealOpencodeLiveShellRun(t *testing.T) {
	a := agentcli.Need(t, "opencode")
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "bash", Args: map[string]any{"command": "sleep 3; echo hi > out.txt", "description": "write out.txt"}}}, Usage: toolUsage},
		{Text: "Wrote out.txt.", Usage: finalUsage, Delay: 3 * time.Second},
	}}})
	run := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 180*time.Second)
	ctx := context.Background()
	var src store.Source
	var cur store.Cursor
	var live []store.Step
	var sawRunning bool
	for !run.Exited() && !sawRunning {
		time.Sleep(100 * time.Millisecond)
		files := run.Store()
		if len(files) == 0 {
			continue
		}
		if src == nil {
			s, err := store.Open(files[0], store.Options{ReadOnly: true})
			if err != nil {
				continue // opencode is still creating its schema
			}
			src = s
			t.Cleanup(func() { src.Close() })
		}
		runs, err := src.Runs(ctx)
		if err != nil || len(runs) != 1 {
			continue
		}
		// The cursor before the timeline, as the explorer takes them:
		// what finishes between the two comes through Changes.
		head, err := src.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := src.Steps(ctx, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if st.Decision == "running bash" && runs[0].Status == store.StatusRunning && !runs[0].Ended() {
				if !st.Pending {
					t.Errorf("the turn in flight is not pending: %+v", st)
				}
				sawRunning, cur, live = true, head, steps
			}
		}
	}
	r := run.Wait()
	if r.Err != nil {
		t.Fatalf("opencode: %v\n%s", r.Err, r.Stderr)
	}
	if !sawRunning {
		t.Fatal("never saw the session running with its bash call running")
	}
	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	var results, finals int
	for _, row := range ch.Steps {
		if row.Decision == "result bash" {
			results++
		}
		if row.Decision == "Wrote out.txt." {
			finals++
		}
	}
	if results != 1 || finals != 1 || len(ch.Runs) != 1 || ch.Runs[0].Status != store.StatusCompleted {
		t.Fatalf("changes after the live read: %d bash results, %d final turns, runs %+v; rows %+v", results, finals, ch.Runs, ch.Steps)
	}
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	// The explorer's fold over the live timeline: the committed turns
	// replace the pending one, nothing is left running.
	folded, _ := fold(live, maxRow(live), runs[0].ID, ch.Steps)
	if s := stillRunning(folded); s != "" {
		t.Errorf("still running after the run finished: %s; rows %+v", s, ch.Steps)
	}
	var got []string
	for _, st := range folded {
		got = append(got, fmt.Sprintf("%d:%s", st.Number, st.Decision))
		if st.Number == 1 && st.Decision == "calls bash" && st.Tokens != int64(toolUsage.Input+toolUsage.Output) {
			t.Errorf("step 1 tokens %d", st.Tokens)
		}
		if _, err := src.StepDetail(ctx, runs[0].ID, st.RowID); err != nil {
			t.Errorf("detail of %d:%s: %v", st.Number, st.Decision, err)
		}
	}
	if strings.Join(got, "|") != "1:calls bash|1:result bash|2:Wrote out.txt." {
		t.Errorf("the folded timeline: %q", got)
	}
	if runs[0].Outcome != store.OutcomeFinished || runs[0].Summary == nil || runs[0].Summary.Steps != 2 {
		t.Errorf("finished run: %+v", runs[0])
	}
	d, err := src.StepDetails(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	id := srv.Served()[0]
	var joined bool
	for _, x := range d {
		for _, tc := range x.Tools {
			joined = joined || tc.ID == id && strings.Contains(tc.Arguments, "echo hi > out.txt") && x.Decision == "result bash"
		}
	}
	if !joined {
		t.Errorf("no result row for call %s: %+v", id, d)
	}
	calls, err := src.ProviderCalls(ctx, runs[0].ID)
	if err != nil || len(calls) != 2 {
		t.Fatalf("provider calls %+v %v", calls, err)
	}
	wantCall(t, calls[0], toolUsage)
	wantCall(t, calls[1], finalUsage)
	if calls[0].Model != "mock-model" || calls[0].Provider != "mock" {
		t.Errorf("model %q provider %q", calls[0].Model, calls[0].Provider)
	}
	if want := int64(toolUsage.Input + toolUsage.Output + finalUsage.Input + finalUsage.Output); runs[0].Tokens != want {
		t.Errorf("run tokens %d, want %d", runs[0].Tokens, want)
	}
}

// TestRealOpencodeSubAgent: the task tool's child session is a child run
// (session.parent_id), with its own shell call and the server's figures.
func TestRealOpencodeSubAgent(t *testing.T) {
	a := agentcli.Need(t, "opencode")
	srv := modelserver.Start(t, modelserver.Script{
		{Match: "[vigil:main]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "task", Args: map[string]any{"description": "sub task", "subagent_type": "general",
				"prompt": "Write sub to sub.txt. [vigil:sub]"}}}, Usage: toolUsage},
			{Text: "All done.", Usage: finalUsage}}},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "write sub.txt"}}}, Usage: subUsage},
			{Text: "Wrote sub.txt."}}},
	})
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 180*time.Second)
	if r.Err != nil {
		t.Fatalf("opencode: %v\n%s", r.Err, r.Stderr)
	}
	src := openDB(t, r.Store(a))
	ctx := context.Background()
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	root, child := runs[0], runs[1]
	if child.ParentID != root.ID || child.Depth != 1 || !root.IsRoot() || !child.Ended() || !root.Ended() {
		t.Fatalf("tree: root %+v child %+v", root, child)
	}
	ev, err := src.AgentEvents(ctx, root.ID)
	if err != nil || len(ev) != 1 || ev[0].ChildRunID != child.ID || ev[0].Kind != store.AgentSpawn {
		t.Fatalf("spawn events %+v %v", ev, err)
	}
	steps, err := src.Steps(ctx, child.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ran bool
	for _, st := range steps {
		ran = ran || st.Decision == "result bash" && st.Number == 1
	}
	if !ran {
		t.Errorf("child steps %+v", steps)
	}
	calls, err := src.ProviderCalls(ctx, child.ID)
	if err != nil || len(calls) < 1 {
		t.Fatalf("child calls %+v %v", calls, err)
	}
	wantCall(t, calls[0], subUsage)
	rc, err := src.ProviderCalls(ctx, root.ID)
	if err != nil || len(rc) != 2 {
		t.Fatalf("root calls %+v %v", rc, err)
	}
	wantCall(t, rc[0], toolUsage)
	wantCall(t, rc[1], finalUsage)
}
