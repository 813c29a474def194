package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

func codexFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "agents", "codex", "hooks", name))
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	return b
}

// The requests Codex sent a real hook read as what they ask: the session
// (thread), the tool, the whole command and, for PreToolUse, the call id
// that names the function_call in the rollout.
func TestCodexHookParsesRealRequests(t *testing.T) {
	r, err := codexHook.parse(codexFixture(t, "deny/call_mock0013.PreToolUse.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Agent != codexAgent || r.Event != "PreToolUse" || r.SessionID != "01a24257-9d4d-7c71-99c8-57db111c5d6a" ||
		r.Tool != "Bash" || r.Input != `{"command":"touch denied.txt"}` || r.ToolUseID != "call_mock0013" || r.Cwd != "/home/dev/work/codex" {
		t.Errorf("PreToolUse: %+v", r)
	}
	r, err = codexHook.parse(codexFixture(t, "permission-request-via-appserver/noid-1796409428869462832.PermissionRequest.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Event != "PermissionRequest" || r.Tool != "Bash" || r.Input != `{"command":"touch hookallowed.txt"}` || r.ToolUseID != "" {
		t.Errorf("PermissionRequest: %+v", r)
	}
	for _, bad := range []string{`not json`, `{"hook_event_name":"Stop","tool_name":"Bash"}`, `{"hook_event_name":"PreToolUse"}`} {
		if _, err := codexHook.parse([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// The answers, in the shape Codex's output_parser.rs reads: PreToolUse
// has no allow (an approval writes nothing and the call runs) and no ask
// (it denies), and a deny always carries a reason, since Codex lets a
// call run when a deny has none. The deny is the body a real Codex hook
// answered with in the fixture.
func TestCodexHookAnswers(t *testing.T) {
	if out := codexHook.answer("PreToolUse", hookAnswer{verdict: answerAllow, reason: "approved in vigil by x"}); out != nil {
		t.Errorf("PreToolUse approve wrote %s", out)
	}
	var want any
	json.Unmarshal(codexFixture(t, "deny/call_mock0013.PreToolUse.response.json"), &want)
	var got any
	json.Unmarshal(codexHook.answer("PreToolUse", hookAnswer{verdict: answerDeny, reason: "external approver said deny"}), &got)
	if !jsonEqual(got, want) {
		t.Errorf("PreToolUse deny: %v, want %v", got, want)
	}
	for _, a := range []hookAnswer{{verdict: answerAsk, reason: "vigil: no decision within 2s"}, {verdict: answerDeny}} {
		out := string(codexHook.answer("PreToolUse", a))
		if !strings.Contains(out, `"permissionDecision":"deny"`) || strings.Contains(out, `"permissionDecisionReason":""`) {
			t.Errorf("PreToolUse %+v: %s", a, out)
		}
	}
	json.Unmarshal(codexFixture(t, "permission-request-via-appserver/noid-1796409428869462832.PermissionRequest.response.json"), &want)
	json.Unmarshal(codexHook.answer("PermissionRequest", hookAnswer{verdict: answerAllow, reason: "external approver said allow"}), &got)
	if !jsonEqual(got, want) {
		t.Errorf("PermissionRequest allow: %v, want %v", got, want)
	}
	if out := codexHook.answer("PermissionRequest", hookAnswer{verdict: answerAsk}); out != nil {
		t.Errorf("PermissionRequest with no decision wrote %s", out)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// The hook on a real Codex request: approved, it answers nothing and
// exits 0 (Codex runs the call); the request is recorded with its call id.
func TestGateCodexApprovedWritesNothing(t *testing.T) {
	state := t.TempDir()
	file := filepath.Join(state, "vigil", gate.FileName)
	cmd := exec.Command(vigilBinary(t), "gate", "--agent", "codex", "--timeout", "1m")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + state}
	cmd.Stdin = bytes.NewReader(codexFixture(t, "allow/call_mock0036.PreToolUse.request.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	h := &hookProc{file: file}
	h.waitRow(t)
	if r := h.row(t); r.Agent != codexAgent || r.ToolUseID != "call_mock0036" || r.State != gate.StateWaiting {
		t.Fatalf("row %+v", r)
	}
	src, err := store.Open(file, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if res, err := src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "1"}, Verdict: store.VerdictApprove}); err != nil || !res.Won {
		t.Fatal(res, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("answer %q, want none", stdout.String())
	}
}

// Input that is not a Codex request: exit 2 with the reason on stderr,
// which Codex takes as a block (pre_tool_use.rs parse_completed).
func TestGateCodexBadInput(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command(vigilBinary(t), "gate", "--agent", "codex")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state}
	cmd.Stdin = strings.NewReader("{")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "not Codex's JSON") {
		t.Errorf("exit %v, stderr %q", err, stderr.String())
	}
}

// A gate store that cannot be opened never lets the call through:
// PreToolUse is denied with the reason (Codex's deny needs one), and
// PermissionRequest goes back to Codex's own approval.
func TestGateCodexBrokenStoreFailsClosed(t *testing.T) {
	for _, c := range []struct{ fixture, want string }{
		{"deny/call_mock0013.PreToolUse.request.json", `"permissionDecision":"deny","permissionDecisionReason":"vigil gate: the gate store`},
		{"permission-request-via-appserver/noid-1796409428869462832.PermissionRequest.request.json", ""},
	} {
		state := t.TempDir()
		notADir := filepath.Join(state, "state")
		writeFile(t, notADir, "a file where the state directory should be")
		cmd := exec.Command(vigilBinary(t), "gate", "--agent", "codex", "--timeout", "1m")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + notADir}
		cmd.Stdin = bytes.NewReader(codexFixture(t, c.fixture))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", c.fixture, err, stderr.String())
		}
		got := strings.TrimSpace(stdout.String())
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: answered %q", c.fixture, got)
		}
		if !strings.Contains(stderr.String(), "not approved") {
			t.Errorf("%s: stderr %q", c.fixture, stderr.String())
		}
	}
}
