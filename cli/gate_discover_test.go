package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store/gate"
)

// With no store named, the gate store is read beside the agent CLIs'
// stores, and its requests are decided through the set like any other.
func TestDiscoveryIncludesTheGateStore(t *testing.T) {
	claude := testkit.Fixtures(t, "agents/claude-code/transcript")
	t.Chdir(t.TempDir())
	home := t.TempDir()
	const session = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	testkit.CopyFile(t, filepath.Join(claude, "main-session.jsonl"), filepath.Join(home, ".claude", "projects", "-home-dev-work", session+".jsonl"))
	file := gate.Path(func(k string) string { return map[string]string{"HOME": home}[k] })
	g, err := gate.OpenHook(file)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Ask(context.Background(), gate.Request{Agent: gate.AgentClaudeCode, Event: "PreToolUse", SessionID: session,
		Tool: "Bash", Input: `{"command":"git push"}`, ToolUseID: "toolu_x"}); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t)
	h.env = []string{"HOME=" + home, "USER=ann"}
	r := h.run("runs", "--json")
	r.wantCode(t, 0)
	contains(t, r.stderr, "reading the 2 found: "+filepath.Join(home, ".claude")+", "+file)
	contains(t, r.stdout, "gate requests")
	// The request links to the session's run in the Claude Code store and
	// to the call it gates.
	contains(t, r.stdout, `"for": {
        "format": "claude-code",
        "run_id": "s1/`+session+`",
        "call_id": "toolu_x",
        "in_set": true`)
	r = h.run("show", "gate/"+session)
	contains(t, r.stdout, "for: claude-code run s1/"+session+", tool call toolu_x\n")

	r = h.run("approve", "gate/1")
	r.wantCode(t, 0)
	contains(t, r.stdout, "approved approval:gate/1: exec Bash: git push")
	if row, err := g.Get(context.Background(), 1); err != nil || row.State != gate.StateApproved || !strings.HasSuffix(row.DecidedBy, " via vigil approve") {
		t.Errorf("row %+v %v", row, err)
	}
	r = h.run("deny", "gate/1")
	if r.code != ExitDecision || !strings.Contains(r.stderr, "already decided: approve") {
		t.Errorf("second decision: exit %d %q", r.code, r.stderr)
	}
}
