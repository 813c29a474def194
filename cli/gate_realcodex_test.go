package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// The real Codex (`codex exec`, which runs with approval_policy never, so
// only PreToolUse gates) with vigil's hook installed by `vigil gate
// install codex`. Codex runs a user's hook only once it is trusted
// (discovery.rs append_matcher_groups); the tests run it with
// --dangerously-bypass-hook-trust, which also proves that Codex reads the
// config.toml install wrote.

// startCodexGated starts Codex with vigil's PreToolUse hook installed
// (hookArgs after "gate install codex"), its model scripted to run
// `echo hi > out.txt` through exec_command.
func startCodexGated(t *testing.T, hookArgs ...string) *gateRun {
	t.Helper()
	return startCodex(t, true, hookArgs...)
}

func startCodex(t *testing.T, bypassTrust bool, hookArgs ...string) *gateRun {
	t.Helper()
	a := agentcli.Need(t, "codex")
	bin := vigilBinary(t)
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "exec_command", Args: map[string]any{"cmd": "echo hi > out.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = func(home, work string) error {
		return installCodexForTest(bin, home, hookArgs)
	}
	if bypassTrust {
		a.Args = func(args []string) []string {
			return append([]string{args[0], "--dangerously-bypass-hook-trust"}, args[1:]...)
		}
	}
	r := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 180*time.Second)
	return &gateRun{Running: r, bin: bin, srv: srv, gateFile: filepath.Join(r.Home, ".local", "state", "vigil", gate.FileName)}
}

// installCodexForTest runs `vigil gate install codex` on the config.toml
// the run's set-up wrote under HOME/.codex.
func installCodexForTest(bin, home string, hookArgs []string) error {
	cmd := exec.Command(bin, append([]string{"gate", "install", "codex", "--event", "PreToolUse", "--matcher", "Bash"}, hookArgs...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("vigil gate install codex: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "+[[hooks.PreToolUse]]") {
		return fmt.Errorf("vigil gate install codex printed no change: %s", out)
	}
	return nil
}

// checkCodexRequest checks the request Codex's hook recorded: the thread,
// the whole command, the call id of the function_call in the rollout,
// and the agent's process: the native codex, not the shell Codex runs
// the hook through nor the node launcher above it (Codex starts each hook
// in a session of its own, and gate.AgentProcess takes the first process
// outside it), so the hook sees Codex exit.
func checkCodexRequest(t *testing.T, g *gateRun, r gate.Row) {
	t.Helper()
	if r.State != gate.StateWaiting || r.Agent != codexAgent || r.Event != "PreToolUse" || r.Tool != "Bash" ||
		!strings.Contains(r.Input, `"command":"echo hi > out.txt"`) || !strings.HasPrefix(r.ToolUseID, "call_") || r.SessionID == "" {
		t.Fatalf("the request in the gate: %+v", r)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.AgentPID)); err != nil || filepath.Base(exe) != "codex" {
		t.Errorf("the request's agent is process %d (%s, %v), not codex", r.AgentPID, exe, err)
	}
	call, _, ok := rolloutCall(t, g, r.ToolUseID)
	if !ok || call != "exec_command" {
		t.Errorf("the rollout has no function_call %s (%q) in thread %s: %v", r.ToolUseID, call, r.SessionID, g.Store())
	}
	for _, f := range g.Store() {
		if !strings.Contains(filepath.Base(f), r.SessionID) {
			t.Errorf("rollout %s is not thread %s's", f, r.SessionID)
		}
	}
}

// rolloutCall finds call id in the run's rollouts: the function_call's
// name and, once there, its function_call_output.
func rolloutCall(t *testing.T, g *gateRun, id string) (name, output string, ok bool) {
	t.Helper()
	for _, f := range g.Store() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var l struct {
				Type    string `json:"type"`
				Payload struct {
					Type   string          `json:"type"`
					CallID string          `json:"call_id"`
					Name   string          `json:"name"`
					Output json.RawMessage `json:"output"`
				} `json:"payload"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "response_item" || l.Payload.CallID != id {
				continue
			}
			switch l.Payload.Type {
			case "function_call":
				name, ok = l.Payload.Name, true
			case "function_call_output":
				output = string(l.Payload.Output)
			}
		}
	}
	return name, output, ok
}

// (a) vigil approve: the hook answers nothing, so Codex runs the call.
func TestGateRealCodexApprove(t *testing.T) {
	g := startCodexGated(t, "--timeout", "3m")
	r := g.waiting(t)
	checkCodexRequest(t, g, r)
	if _, err := os.Stat(filepath.Join(g.Work, "out.txt")); err == nil {
		t.Fatal("out.txt was written while the call waited in the gate")
	}
	out, code := g.vigil(t, "approve", "1")
	if code != 0 || !strings.Contains(out, "approved approval:1") {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	res := g.Wait()
	if res.Err != nil {
		t.Fatalf("codex: %v\n%s", res.Err, tailOf(res.Stderr))
	}
	if b, err := os.ReadFile(filepath.Join(res.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("out.txt after approve: %q %v", b, err)
	}
	recs := auditRecords(t, g)
	if last := recs[len(recs)-1]; last.Outcome != audit.Won || last.Verdict != "approve" || last.Request != "approval 1" {
		t.Errorf("audit log %+v", recs)
	}
}

// (b) vigil deny --reason: the command does not run, and the reason is
// the call's output in the rollout and what the model was sent.
func TestGateRealCodexDeny(t *testing.T) {
	g := startCodexGated(t, "--timeout", "3m")
	r := g.waiting(t)
	checkCodexRequest(t, g, r)
	out, code := g.vigil(t, "deny", "1", "--reason", "not on this branch")
	if code != 0 || !strings.Contains(out, "denied approval:1") {
		t.Fatalf("vigil deny: exit %d: %s", code, out)
	}
	res := g.Wait()
	if _, err := os.Stat(filepath.Join(res.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after a deny")
	}
	_, output, _ := rolloutCall(t, g, r.ToolUseID)
	if !strings.Contains(output, "not on this branch") {
		t.Errorf("the rollout's output for %s does not carry the reason: %s", r.ToolUseID, output)
	}
	if sent, ok := g.srv.ToolResult(r.ToolUseID); !ok || !strings.Contains(sent, "not on this branch") {
		t.Errorf("the model was sent %q for %s", sent, r.ToolUseID)
	}
	t.Logf("function_call_output: %s", output)
}

// (d) Two deciders race, as two processes: one wins, the other is told it
// lost and what won, and Codex does what the winner said.
func TestGateRealCodexRace(t *testing.T) {
	g := startCodexGated(t, "--timeout", "3m")
	checkCodexRequest(t, g, g.waiting(t))
	raceDeciders(t, g)
}

// (e) Codex is killed while its hook waits: the request reads withdrawn
// and a late approve is refused with that reason.
func TestGateRealCodexKilled(t *testing.T) {
	g := startCodexGated(t, "--timeout", "3m")
	r := g.waiting(t)
	checkCodexRequest(t, g, r)
	killWhileWaiting(t, g, r)
}

// (f) No decision within --timeout: PreToolUse has no "ask" in Codex, so
// the gate denies with the reason, the call does not run, and a late
// approve is refused.
func TestGateRealCodexTimeout(t *testing.T) {
	g := startCodexGated(t, "--timeout", "3s")
	r := g.waiting(t)
	checkCodexRequest(t, g, r)
	run := g.Wait()
	if _, err := os.Stat(filepath.Join(run.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after the gate timed out")
	}
	_, output, _ := rolloutCall(t, g, r.ToolUseID)
	if !strings.Contains(output, "no decision within 3s") {
		t.Errorf("the rollout's output for %s: %s", r.ToolUseID, output)
	}
	out, code := g.vigil(t, "approve", "1")
	if code != ExitDecision || !strings.Contains(out, "not decided: expired: no decision within 3s") {
		t.Fatalf("late approve: exit %d: %s", code, out)
	}
}

// What install says of trust is so: a hook install wrote and nobody
// trusted is not run, and the call goes ahead as if there were no gate.
func TestGateRealCodexUntrustedHookDoesNotRun(t *testing.T) {
	g := startCodex(t, false, "--timeout", "3m")
	res := g.Wait()
	if res.Err != nil {
		t.Fatalf("codex: %v\n%s", res.Err, tailOf(res.Stderr))
	}
	if b, err := os.ReadFile(filepath.Join(res.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
	// Install made the (empty) gate store; no request is in it.
	h, err := gate.OpenHook(g.gateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if r, err := h.Get(context.Background(), 1); err == nil {
		t.Errorf("an untrusted hook recorded a request: %+v", r)
	}
}
