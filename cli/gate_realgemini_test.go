package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// The Gemini CLI tests drive the real pinned gemini headless (-p --yolo:
// without --yolo a headless run offers no shell tool). BeforeTool hooks run
// under --yolo all the same: Scheduler._processToolCall calls
// evaluateBeforeToolHook before it checks the policy, and a deny ends the
// call there.

const geminiCommand = "echo hi > out.txt"

// startGeminiGated starts Gemini CLI with vigil's BeforeTool hook
// installed by `vigil gate install gemini` (hookArgs added), its model
// scripted to run geminiCommand.
func startGeminiGated(t *testing.T, hookArgs ...string) *gateRun {
	t.Helper()
	a := agentcli.Need(t, "gemini-cli")
	bin := vigilBinary(t)
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "run_shell_command", Args: map[string]any{"command": geminiCommand, "description": "write out.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = func(home, work string) error {
		cmd := exec.Command(bin, append([]string{"gate", "install", "gemini", "--matcher", "run_shell_command"}, hookArgs...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "+") {
			t.Fatalf("vigil gate install gemini: %v: %s", err, out)
		}
		return nil
	}
	r := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 150*time.Second)
	return &gateRun{Running: r, bin: bin, srv: srv, gateFile: filepath.Join(r.Home, ".local", "state", "vigil", gate.FileName)}
}

// checkGeminiRequest: the request names Gemini CLI's session, the tool and
// its whole arguments, and the gemini process as its agent (the hook's
// parent past bash, not the terminal AgentProcess would find: Gemini CLI
// spawns hooks without a session of their own, HookRunner.executeCommandHook).
func checkGeminiRequest(t *testing.T, r gate.Row) {
	t.Helper()
	if r.State != gate.StateWaiting || r.Agent != gate.AgentGeminiCLI || r.Event != "BeforeTool" || r.Tool != "run_shell_command" ||
		!strings.Contains(r.Input, `"command":"echo hi \u003e out.txt"`) && !strings.Contains(r.Input, `"command":"echo hi > out.txt"`) ||
		r.SessionID == "" || r.ToolUseID != "" || r.Cwd == "" {
		t.Fatalf("the request in the gate: %+v", r)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(r.AgentPID) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "gemini") {
		t.Errorf("the request's agent is process %d (%.80q), not gemini: %v", r.AgentPID, cmdline, err)
	}
}

// streamResult is the stream-json tool_result line Gemini CLI printed for
// the tool_use that ran geminiCommand.
func streamResult(t *testing.T, stdout []byte) string {
	t.Helper()
	var id string
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Type   string `json:"type"`
			ToolID string `json:"tool_id"`
			Params struct {
				Command string `json:"command"`
			} `json:"parameters"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Type == "tool_use" && l.Params.Command == geminiCommand:
			id = l.ToolID
		case l.Type == "tool_result" && id != "" && l.ToolID == id:
			return sc.Text()
		}
	}
	t.Fatalf("no tool_result for the shell call in gemini's output:\n%s", tailOf(stdout))
	return ""
}

// chatCall is the chat file's record of the call that ran geminiCommand
// (the last line of its message wins), and the file's sessionId.
func chatCall(t *testing.T, g *gateRun) (call, session string) {
	t.Helper()
	for _, f := range g.Store() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var l struct {
				SessionID string            `json:"sessionId"`
				ToolCalls []json.RawMessage `json:"toolCalls"`
			}
			if json.Unmarshal([]byte(line), &l) != nil {
				continue
			}
			if l.SessionID != "" {
				session = l.SessionID
			}
			for _, c := range l.ToolCalls {
				var tc struct {
					Args struct {
						Command string `json:"command"`
					} `json:"args"`
				}
				if json.Unmarshal(c, &tc) == nil && tc.Args.Command == geminiCommand {
					call = string(c)
				}
			}
		}
	}
	if call == "" {
		t.Fatalf("no call of %q in the chat files %v", geminiCommand, g.Store())
	}
	return call, session
}

// (a) vigil approve: the command runs; the request is the chat file's
// session; the audit log names who decided.
func TestGateRealGeminiApprove(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkGeminiRequest(t, r)
	if _, err := os.Stat(filepath.Join(g.Work, "out.txt")); err == nil {
		t.Fatal("out.txt was written while the call waited in the gate")
	}
	out, code := g.vigil(t, "approve", "1")
	if code != 0 || !strings.Contains(out, "approved approval:1") {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	res := g.Wait()
	if res.Err != nil {
		t.Fatalf("gemini: %v\n%s", res.Err, tailOf(res.Stderr))
	}
	if b, err := os.ReadFile(filepath.Join(res.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("out.txt after approve: %q %v", b, err)
	}
	// The link, as far as the format has one: the request's session is
	// the chat file's, and its tool and arguments are the call's.
	call, session := chatCall(t, g)
	var c struct {
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Status string          `json:"status"`
	}
	json.Unmarshal([]byte(call), &c)
	if session != r.SessionID || c.Name != r.Tool || !sameJSON(c.Args, []byte(r.Input)) || c.Status != "success" {
		t.Errorf("the chat file's session %q (the request's %q), call %s, request input %s", session, r.SessionID, call, r.Input)
	}
	recs := auditRecords(t, g)
	if last := recs[len(recs)-1]; last.Outcome != audit.Won || last.Verdict != "approve" || !strings.HasPrefix(last.Who.Name, "vigil-test@") {
		t.Errorf("audit log %+v", recs)
	}
}

// (b) vigil deny --reason: the command does not run, and the reason is
// what Gemini CLI tells the model, in its stream-json output and its chat
// file ("Tool execution blocked: REASON", evaluateBeforeToolHook).
func TestGateRealGeminiDeny(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	checkGeminiRequest(t, g.waiting(t))
	out, code := g.vigil(t, "deny", "1", "--reason", "not on a Friday")
	if code != 0 || !strings.Contains(out, "denied approval:1") {
		t.Fatalf("vigil deny: exit %d: %s", code, out)
	}
	res := g.Wait()
	if _, err := os.Stat(filepath.Join(res.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after a deny")
	}
	if line := streamResult(t, res.Stdout); !strings.Contains(line, "Tool execution blocked: not on a Friday") {
		t.Errorf("stream-json tool_result does not carry the reason: %s", line)
	}
	if call, _ := chatCall(t, g); !strings.Contains(call, "Tool execution blocked: not on a Friday") {
		t.Errorf("the chat file's call does not carry the reason: %s", call)
	}
}

// (d) Two deciders race, as two processes: one wins, the other is told
// what won, and gemini does what the winner said.
func TestGateRealGeminiRace(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	checkGeminiRequest(t, g.waiting(t))
	raceDeciders(t, g)
}

// (e) Gemini CLI killed while its hook waits: the request reads withdrawn
// and a late approve is refused with that reason.
func TestGateRealGeminiKilled(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkGeminiRequest(t, r)
	killWhileWaiting(t, g, r)
}

// (f) No decision within --timeout: a deny, not "ask" (a forced ask in a
// headless run waits for a confirmation nobody can give: resolveConfirmation
// with forcedDecision ask_user). The model is told why, the request reads
// expired and a late approve is refused.
func TestGateRealGeminiTimeout(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "3s")
	checkGeminiRequest(t, g.waiting(t))
	run := g.Wait()
	if run.Err != nil {
		t.Fatalf("gemini: %v\n%s", run.Err, tailOf(run.Stderr))
	}
	if _, err := os.Stat(filepath.Join(run.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after the gate timed out")
	}
	if line := streamResult(t, run.Stdout); !strings.Contains(line, "Tool execution blocked: vigil: no decision within 3s") {
		t.Errorf("stream-json tool_result: %s", line)
	}
	out, code := g.vigil(t, "approve", "1")
	if code != ExitDecision || !strings.Contains(out, "not decided: expired: no decision within 3s") {
		t.Fatalf("late approve: exit %d: %s", code, out)
	}
}

// The gate itself killed outright (SIGKILL), gemini alive: the call must
// not run. Gemini CLI reads a hook that died by a signal as exit 0 and its
// stderr as an allow (HookRunner.executeCommandHook: exitCode || 0,
// convertPlainTextToHookOutput); the installed command keeps bash waiting
// for it, and bash's exit status 137 is a deny.
func TestGateRealGeminiHookKilled(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	checkGeminiRequest(t, g.waiting(t))
	pid := gateHookPID(t, g)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run := g.Wait()
	if _, err := os.Stat(filepath.Join(run.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists: the call ran after its gate was killed")
	}
	if line := streamResult(t, run.Stdout); !strings.Contains(line, "Tool execution blocked") {
		t.Errorf("stream-json tool_result: %s", line)
	}
	out, code := g.vigil(t, "approve", "1")
	if code != ExitDecision || !strings.Contains(out, "withdrawn") {
		t.Fatalf("late approve: exit %d: %s", code, out)
	}
}

// gateHookPID is the pid of the waiting request's vigil gate process.
func gateHookPID(t *testing.T, g *gateRun) int {
	t.Helper()
	h, err := gate.OpenHook(g.gateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := h.Get(t.Context(), 1)
	if err != nil || r.PID <= 0 {
		t.Fatalf("the request's hook pid: %+v %v", r, err)
	}
	return r.PID
}

// Only the gemini process killed, its hook left running: the hook learns
// of the agent's exit from the kernel (it watches the pid ParentAgent
// named), records the request withdrawn itself and stops.
func TestGateRealGeminiAgentExited(t *testing.T) {
	g := startGeminiGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkGeminiRequest(t, r)
	hook := gateHookPID(t, g)
	if err := syscall.Kill(r.AgentPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	g.Wait()
	waitFor(t, 30*time.Second, "the hook to record the request withdrawn", func() bool {
		h, err := gate.OpenHook(g.gateFile)
		if err != nil {
			return false
		}
		defer h.Close()
		row, err := h.Get(t.Context(), 1)
		return err == nil && row.State == gate.StateWithdrawn
	})
	h, err := gate.OpenHook(g.gateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	row, _ := h.Get(t.Context(), 1)
	if want := "the agent (process " + strconv.Itoa(r.AgentPID) + ") exited while it waited"; row.Reason != want {
		t.Errorf("reason %q, want %q", row.Reason, want)
	}
	waitFor(t, 30*time.Second, "the hook to exit", func() bool { return syscall.Kill(hook, 0) != nil })
	if _, err := os.Stat(filepath.Join(g.Work, "out.txt")); err == nil {
		t.Error("out.txt exists after the agent was killed")
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
