package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

// startGeminiHook runs `vigil gate --agent gemini` on one of the recorded
// BeforeTool requests (../shared/fixtures/agents/gemini-cli/hooks).
func startGeminiHook(t *testing.T, fixture string, env []string, args ...string) *hookProc {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "agents", "gemini-cli", "hooks", fixture))
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	state := t.TempDir()
	h := &hookProc{file: filepath.Join(state, "vigil", gate.FileName)}
	h.cmd = exec.Command(vigilBinary(t), append([]string{"gate", "--agent", "gemini"}, args...)...)
	h.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + state}, env...)
	h.cmd.Stdin = bytes.NewReader(body)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cmd.Process.Kill(); h.cmd.Wait() })
	return h
}

const geminiDenyFixture = "deny/run_shell_command-1796409543316217556.BeforeTool.request.json"

// geminiAnswer is the hook's answer, which must have exactly the fields of
// the recorded answers ({"decision","reason"}).
func geminiAnswer(t *testing.T, h *hookProc) (decision, reason string) {
	t.Helper()
	var a map[string]string
	if err := json.Unmarshal(h.stdout.Bytes(), &a); err != nil || len(a) != 2 {
		t.Fatalf("answer %q: %v (stderr %s)", h.stdout.String(), err, h.stderr.String())
	}
	return a["decision"], a["reason"]
}

func decideGate(t *testing.T, file string, v store.Verdict, reason string) {
	t.Helper()
	src, err := store.Open(file, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	res, err := src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "1"}, Verdict: v, Text: reason})
	if err != nil || !res.Won {
		t.Fatal(res, err)
	}
}

// A BeforeTool request is recorded whole (session, cwd, tool, arguments;
// no call id) and a deny's reason is the answer's reason.
func TestGateGeminiDenied(t *testing.T) {
	h := startGeminiHook(t, geminiDenyFixture, nil, "--timeout", "1m")
	h.waitRow(t)
	r := h.row(t)
	if r.Agent != gate.AgentGeminiCLI || r.Event != "BeforeTool" || r.SessionID != "412c86b1-c629-42e0-a80d-b35b571ef868" ||
		r.Cwd != "/home/dev/work/gemini" || r.Tool != "run_shell_command" || r.ToolUseID != "" ||
		r.Input != `{"command":"touch g denied.txt","description":"mock shell step"}` {
		t.Errorf("row %+v", r)
	}
	decideGate(t, h.file, store.VerdictDeny, "not today")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	if d, why := geminiAnswer(t, h); d != "deny" || why != "not today" {
		t.Errorf("answer %s", h.stdout.String())
	}
}

func TestGateGeminiApproved(t *testing.T) {
	h := startGeminiHook(t, "allow/run_shell_command-1796409550603760647.BeforeTool.request.json", nil, "--timeout", "1m")
	h.waitRow(t)
	decideGate(t, h.file, store.VerdictApprove, "")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	if d, why := geminiAnswer(t, h); d != "allow" || !strings.HasPrefix(why, "approved in vigil by") {
		t.Errorf("answer %s", h.stdout.String())
	}
}

// No decision in time denies with the reason; the request reads expired.
func TestGateGeminiTimeout(t *testing.T) {
	h := startGeminiHook(t, geminiDenyFixture, nil, "--timeout", "500ms")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	if d, why := geminiAnswer(t, h); d != "deny" || why != "vigil: no decision within 500ms" {
		t.Errorf("answer %s", h.stdout.String())
	}
	if r := h.row(t); r.State != gate.StateExpired {
		t.Errorf("row %+v", r)
	}
}

// Stopped by a signal (Gemini CLI's own hook timeout sends SIGTERM): the
// request is withdrawn and the answer denies.
func TestGateGeminiSignalWithdraws(t *testing.T) {
	h := startGeminiHook(t, geminiDenyFixture, nil, "--timeout", "1m")
	h.waitRow(t)
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.cmd.Wait()
	if r := h.row(t); r.State != gate.StateWithdrawn {
		t.Errorf("row %+v", r)
	}
	if d, _ := geminiAnswer(t, h); d != "deny" {
		t.Errorf("answer %s", h.stdout.String())
	}
}

// A gate store that cannot be made denies, with the reason, exit 0 (the
// answer is on stdout).
func TestGateGeminiBrokenStore(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	writeFile(t, blocker, "x")
	h := startGeminiHook(t, geminiDenyFixture, []string{"XDG_STATE_HOME=" + blocker}, "--timeout", "1m")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	if d, why := geminiAnswer(t, h); d != "deny" || !strings.HasPrefix(why, "vigil gate: the gate store: ") {
		t.Errorf("answer %s", h.stdout.String())
	}
}

// Input that is not a BeforeTool request: exit 2 with one line on stderr
// and nothing on stdout, which Gemini CLI takes as a deny whose reason is
// that line (HookRunner.convertPlainTextToHookOutput); nothing recorded.
func TestGateGeminiBadInput(t *testing.T) {
	for _, body := range []string{"not json", `{"hook_event_name":"AfterTool","tool_name":"run_shell_command"}`, `{"hook_event_name":"BeforeTool"}`} {
		state := t.TempDir()
		cmd := exec.Command(vigilBinary(t), "gate", "--agent", "gemini")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state}
		cmd.Stdin = strings.NewReader(body)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("%s: exit %v", body, err)
		}
		if s := stderr.String(); stdout.Len() != 0 || strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "vigil gate: not approved: ") {
			t.Errorf("%s: stdout %q stderr %q", body, stdout.String(), s)
		}
		if _, err := os.Stat(filepath.Join(state, "vigil", gate.FileName)); err == nil {
			t.Errorf("%s: a gate store was created for bad input", body)
		}
	}
}
