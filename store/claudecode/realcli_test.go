package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store"
)

var (
	spawnUsage = modelserver.Usage{Input: 1200, Output: 30, CacheRead: 100, CacheWrite: 50}
	shellUsage = modelserver.Usage{Input: 1300, Output: 40, CacheRead: 200, CacheWrite: 60}
	finalUsage = modelserver.Usage{Input: 1400, Output: 50, CacheRead: 300, CacheWrite: 70}
	subUsage   = modelserver.Usage{Input: 900, Output: 20, CacheRead: 10, CacheWrite: 5}
)

// The real Claude Code, headless against the model server: the parent
// spawns a sub-agent, then runs a slow shell call; while that call runs
// the session shows live with the call running, and after the run ends it
// is finished with every call's result and the server's token figures.
func TestRealClaudeCode(t *testing.T) {
	a := agentcli.Need(t, "claude-code")
	srv := modelserver.Start(t, modelserver.Script{
		{Match: "[vigil:main]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "Agent", Args: map[string]any{"description": "sub task", "subagent_type": "general-purpose", "prompt": "Write sub to sub.txt. [vigil:sub]"}}}, Usage: spawnUsage},
			{Text: "Launched."},
			{Calls: []modelserver.Call{{Name: "Bash", Args: map[string]any{"command": "sleep 4; echo hi > out.txt", "description": "slow write"}}}, Usage: shellUsage},
			{Text: "All done.", Usage: finalUsage},
		}},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "Bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "w"}}}, Usage: subUsage},
			{Text: "Wrote sub.txt."}}},
	})
	run := a.Start(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	cfg := filepath.Join(run.Home, ".claude")
	ctx := context.Background()

	// Live: wait for the slow shell call to be on disk without its result.
	var live bool
	var liveSrc store.Source
	var liveCur store.Cursor
	var liveSteps []store.Step
	var rootID string
	deadline := time.Now().Add(60 * time.Second)
	for !live && time.Now().Before(deadline) && !run.Exited() {
		time.Sleep(100 * time.Millisecond)
		src, err := store.Open(cfg, store.Options{ReadOnly: true})
		if err != nil {
			continue
		}
		for _, r := range mustRuns(t, src) {
			if r.ParentID != "" || r.Lease == nil || r.Status != store.StatusRunning {
				continue
			}
			if store.StateOf(r, r.Lease, src.RecordsLeases(), false, time.Now()) != store.StateRunning {
				t.Errorf("live run state %v", store.StateOf(r, r.Lease, src.RecordsLeases(), false, time.Now()))
			}
			steps, _ := src.Steps(ctx, r.ID)
			if n := len(steps); n > 0 && steps[n-1].Decision == "running" && strings.Contains(steps[n-1].ToolCall, "sleep 4") {
				live = steps[n-1].Pending
			}
			if live {
				rootID = r.ID
				liveSrc, liveSteps = src, steps
				var err error
				liveCur, err = src.Head(ctx)
				must(t, err)
			}
		}
		if !live {
			src.Close()
		}
	}
	res := run.Wait()
	if !live || res.Err != nil {
		t.Fatalf("live with the slow call running: %v; exit %v\n%s", live, res.Err, res.Stderr)
	}

	// What a reader tailing the live session gets once it ends: the shell
	// turn with its result, the final turn, the lease gone, the run finished.
	defer liveSrc.Close()
	ch, _, err := liveSrc.Changes(ctx, liveCur)
	must(t, err)
	var shellDone, final, ended bool
	for _, st := range ch.Steps {
		shellDone = shellDone || (st.RunID == rootID && strings.Contains(st.ToolCall, "sleep 4") && st.Decision == "tool_use")
		final = final || (st.RunID == rootID && st.ResultHead == "All done.")
	}
	for _, r := range ch.Runs {
		ended = ended || (r.ID == rootID && r.Status == store.StatusCompleted && r.Lease == nil)
	}
	if !shellDone || !final || !ended || !ch.LeasesChanged || len(ch.Leases) != 0 {
		t.Errorf("changes after the live session ended: shell turn %v, final turn %v, run ended %v, leases %v %v\n%+v",
			shellDone, final, ended, ch.LeasesChanged, ch.Leases, ch.Steps)
	}
	// Folded as the explorer folds them (rows past the largest id seen onto
	// the steps read while the call ran), the shell turn's committed row
	// replaces its running placeholder: the timeline ends as Steps reads it.
	seen := int64(0)
	for _, st := range liveSteps {
		seen = max(seen, st.RowID)
	}
	var rows []store.StepRow
	for _, r := range ch.Steps {
		if r.RunID == rootID && r.RowID > seen {
			rows, seen = append(rows, r), r.RowID
		}
	}
	folded := store.AppendStepRows(liveSteps, rows)
	after, err := liveSrc.Steps(ctx, rootID)
	must(t, err)
	shellTokens := int64(shellUsage.Input + shellUsage.Output + shellUsage.CacheRead + shellUsage.CacheWrite)
	if len(folded) != len(after) || len(folded) != 4 {
		t.Errorf("folded from a cursor taken while the call ran: %+v\nSteps after: %+v", folded, after)
	} else {
		for i, st := range folded {
			a := after[i]
			if st.Pending || st.RowID != a.RowID || st.Number != a.Number || st.Decision != a.Decision || st.ResultHead != a.ResultHead || st.Tokens != a.Tokens {
				t.Errorf("folded step %d %+v, Steps after the run %+v", i+1, st, a)
			}
		}
		if sh := folded[2]; !strings.Contains(sh.ToolCall, "sleep 4") || sh.Decision != "tool_use" || sh.Tokens != shellTokens {
			t.Errorf("the shell turn folded: %+v (tokens want %d)", sh, shellTokens)
		}
	}

	src := open(t, cfg)
	runs := mustRuns(t, src)
	if len(runs) != 2 {
		t.Fatalf("runs %+v", runs)
	}
	var root, child store.Run
	for _, r := range runs {
		if r.ParentID == "" {
			root = r
		} else {
			child = r
		}
	}
	if child.ParentID != root.ID || root.Status != store.StatusCompleted || child.Status != store.StatusCompleted || root.Lease != nil {
		t.Fatalf("after the run: root %+v child %+v", root, child)
	}
	served := map[int][]string{0: callsOf(srv, 0), 1: callsOf(srv, 1)}
	for conv, id := range map[int]string{0: root.ID, 1: child.ID} {
		calls, err := src.ProviderCalls(ctx, id)
		must(t, err)
		steps, err := src.Steps(ctx, id)
		must(t, err)
		want := map[int][]modelserver.Usage{0: {spawnUsage, {}, shellUsage, finalUsage}, 1: {subUsage, {}}}[conv]
		if len(calls) != len(want) || len(steps) != len(want) {
			t.Fatalf("%s: %d turns, %d steps; want %d", id, len(calls), len(steps), len(want))
		}
		for i, c := range calls {
			got := modelserver.Usage{Input: int(*c.PromptTokens), Output: int(*c.CompletionTokens), CacheRead: int(*c.CacheReadTokens), CacheWrite: int(*c.CacheWriteTokens)}
			if got != want[i] {
				t.Errorf("%s turn %d: usage %+v, the server reported %+v", id, i+1, got, want[i])
			}
		}
		var callIDs []string
		for _, st := range steps {
			if st.Pending || st.Decision == "running" {
				t.Errorf("%s: step %d still running after the run: %+v", id, st.Number, st)
			}
			d, err := src.StepDetail(ctx, id, st.RowID)
			must(t, err)
			for _, tc := range d.Tools {
				callIDs = append(callIDs, tc.ID)
				result, ok := srv.ToolResult(tc.ID)
				if head := oneLine(result, 60); !ok || !strings.Contains(d.Result, head) || strings.Contains(d.Result, "running (no result yet)") {
					t.Errorf("%s: call %s: result %q, the CLI sent back %q", id, tc.ID, d.Result, result)
				}
			}
		}
		if strings.Join(callIDs, ",") != strings.Join(served[conv], ",") {
			t.Errorf("%s: calls %v, the server handed out %v", id, callIDs, served[conv])
		}
	}
	if b, err := os.ReadFile(filepath.Join(res.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Errorf("out.txt %q %v", b, err)
	}
}

func mustRuns(t *testing.T, src store.Source) []store.Run {
	t.Helper()
	runs, err := src.Runs(context.Background())
	must(t, err)
	return runs
}

func callsOf(srv *modelserver.Server, conv int) []string {
	var ids []string
	for _, r := range srv.Requests() {
		if r.Conversation == conv {
			ids = append(ids, r.CallIDs...)
		}
	}
	return ids
}
