package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// A sub-agent's call: Codex's hook names the session (the parent thread)
// and the sub-agent (its own thread), as Claude Code's does, so the
// request is a run under its session whose id is the sub-agent's thread,
// the run the Codex store shows its rollout as; the call id is in that
// rollout.
func TestGateRealCodexSubAgent(t *testing.T) {
	a := agentcli.Need(t, "codex")
	bin := vigilBinary(t)
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
			{Calls: []modelserver.Call{{Name: "spawn_agent", Namespace: "multi_agent_v1", Args: map[string]any{"message": "Write sub to sub.txt. [vigil:sub]"}}}},
			{Calls: []modelserver.Call{wait}}, {Text: "All done."}}},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{
			{Calls: []modelserver.Call{{Name: "exec_command", Args: map[string]any{"cmd": "echo sub > sub.txt"}}}}, {Text: "Wrote sub.txt."}}},
	})
	a.Prepare = func(home, work string) error { return installCodexForTest(bin, home, []string{"--timeout", "3m"}) }
	a.Args = func(args []string) []string {
		return append([]string{args[0], "--dangerously-bypass-hook-trust"}, args[1:]...)
	}
	r := a.Start(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 180*time.Second)
	g := &gateRun{Running: r, bin: bin, srv: srv, gateFile: filepath.Join(r.Home, ".local", "state", "vigil", gate.FileName)}
	row := g.waiting(t)
	if row.AgentID == "" || row.SessionID == "" || row.AgentID == row.SessionID || !strings.Contains(row.Input, "echo sub > sub.txt") {
		t.Fatalf("the sub-agent's request: %+v", row)
	}
	var inChild bool
	for _, f := range g.Store() {
		base := filepath.Base(f)
		if !strings.Contains(base, row.AgentID) && !strings.Contains(base, row.SessionID) {
			t.Errorf("rollout %s is neither the session's (%s) nor the sub-agent's (%s)", base, row.SessionID, row.AgentID)
		}
		if b, _ := os.ReadFile(f); strings.Contains(string(b), `"call_id":"`+row.ToolUseID+`"`) {
			inChild = strings.Contains(base, row.AgentID)
		}
	}
	if !inChild {
		t.Errorf("call %s is not in the sub-agent's rollout: %v", row.ToolUseID, g.Store())
	}
	if out, code := g.vigil(t, "approve", "1"); code != 0 || !strings.Contains(out, "(run "+row.AgentID) {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	res := g.Wait()
	if b, err := os.ReadFile(filepath.Join(res.Work, "sub.txt")); err != nil || strings.TrimSpace(string(b)) != "sub" {
		t.Errorf("sub.txt after approve: %q %v (codex: %v)", b, err, res.Err)
	}
}
