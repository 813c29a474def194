package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/agentclis"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// The PermissionRequest hook runs where Codex would ask for approval:
// here `codex app-server` (JSON-RPC on stdio, as an IDE drives it) with a
// thread started under approvalPolicy "untrusted". The hook runs before
// the client is asked (permission_request.rs: "before guardian or user
// approval UI is shown"); its allow answers the question, and no decision
// leaves it to the client's item/commandExecution/requestApproval.

// appServer is a running `codex app-server` and its client's side.
type appServer struct {
	cmd      *exec.Cmd
	in       io.WriteCloser
	msgs     chan map[string]any
	home     string
	work     string
	gateFile string
	bin      string
	srv      *modelserver.Server
	nextID   int
	mu       sync.Mutex
	seen     []string // the methods the server sent, in order
}

// startAppServer starts Codex's app-server with vigil's PermissionRequest
// hook installed (hookArgs after "gate install codex"), its model
// scripted to run `echo hi > out.txt`.
func startAppServer(t *testing.T, hookArgs ...string) *appServer {
	t.Helper()
	a := agentcli.Need(t, "codex")
	cache, err := agentclis.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := vigilBinary(t)
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "exec_command", Args: map[string]any{"cmd": "echo hi > out.txt"}}}},
		{Text: "Done."},
	}}})
	home := t.TempDir()
	s := &appServer{home: home, work: filepath.Join(home, "work"), bin: bin, srv: srv, msgs: make(chan map[string]any, 256),
		gateFile: filepath.Join(home, ".local", "state", "vigil", gate.FileName)}
	if err := os.MkdirAll(s.work, 0o755); err != nil {
		t.Fatal(err)
	}
	// The same model set-up agentcli gives `codex exec`.
	config := fmt.Sprintf("model = \"gpt-5-vigil-test\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n"+
		"[model_providers.mock]\nname = \"mock\"\nbase_url = %q\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n\n"+
		"[analytics]\nenabled = false\n", srv.URL+"/v1")
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), config)
	cmd := exec.Command(bin, append([]string{"gate", "install", "codex", "--event", "PermissionRequest", "--matcher", "Bash"}, hookArgs...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "+[[hooks.PermissionRequest]]") {
		t.Fatalf("vigil gate install codex: %v: %s", err, out)
	}

	s.cmd = exec.Command(a.Path(cache), "app-server")
	s.cmd.Dir = s.work
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=vigil-test", "SHELL=/bin/bash", "LANG=C.UTF-8",
		"TERM=dumb", "TMPDIR=" + os.TempDir(), "MOCK_API_KEY=vigil-test", "CODEX_HOME=" + filepath.Join(home, ".codex"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	s.cmd.Stderr = &stderr
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.in.Close()
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Wait()
		if t.Failed() {
			t.Logf("app-server stderr:\n%s\nserver methods: %v", tailOf([]byte(stderr.String())), s.methods())
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				if meth, _ := m["method"].(string); meth != "" {
					s.mu.Lock()
					s.seen = append(s.seen, meth)
					s.mu.Unlock()
				}
				s.msgs <- m
			}
		}
		close(s.msgs)
	}()
	return s
}

func (s *appServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *appServer) send(t *testing.T, m map[string]any) {
	t.Helper()
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("writing to the app-server: %v", err)
	}
}

// call sends a request and waits for its result.
func (s *appServer) call(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	s.nextID++
	id := s.nextID
	s.send(t, map[string]any{"id": id, "method": method, "params": params})
	m := s.until(t, 60*time.Second, method+"'s result", func(m map[string]any) bool {
		_, hasMethod := m["method"]
		return !hasMethod && m["id"] == float64(id)
	})
	if m["error"] != nil {
		t.Fatalf("%s: %v", method, m["error"])
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// until reads the server's messages until one satisfies match.
func (s *appServer) until(t *testing.T, d time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("the app-server closed before %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s within %s", what, d)
		}
	}
}

// startTurn opens a thread that asks before any untrusted command and
// starts the turn whose model runs `echo hi > out.txt`.
func (s *appServer) startTurn(t *testing.T) (thread string) {
	t.Helper()
	s.call(t, "initialize", map[string]any{"clientInfo": map[string]any{"name": "vigil_test", "title": "vigil test", "version": "0.0.1"}})
	s.send(t, map[string]any{"method": "initialized"})
	s.trust(t)
	r := s.call(t, "thread/start", map[string]any{"cwd": s.work, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"})
	th, _ := r["thread"].(map[string]any)
	thread, _ = th["id"].(string)
	if thread == "" {
		t.Fatalf("thread/start: %v", r)
	}
	s.call(t, "turn/start", map[string]any{"threadId": thread, "input": []any{map[string]any{"type": "text", "text": "Write hi to out.txt. [vigil:main]"}}})
	return thread
}

// trust trusts vigil's hook as Codex's /hooks does: hooks/list names it
// untrusted with its key and current hash, and config/batchWrite records
// that hash under [hooks.state."KEY"] (discovery.rs hook_trust_status).
func (s *appServer) trust(t *testing.T) {
	t.Helper()
	r := s.call(t, "hooks/list", map[string]any{"cwds": []string{s.work}})
	var key, hash string
	data, _ := r["data"].([]any)
	for _, d := range data {
		hooks, _ := d.(map[string]any)["hooks"].([]any)
		for _, h := range hooks {
			h, _ := h.(map[string]any)
			if cmd, _ := h["command"].(string); strings.Contains(cmd, "gate --agent codex") {
				if h["trustStatus"] != "untrusted" {
					t.Errorf("vigil's hook as installed is %v, want untrusted", h["trustStatus"])
				}
				key, _ = h["key"].(string)
				hash, _ = h["currentHash"].(string)
			}
		}
	}
	if key == "" || hash == "" {
		t.Fatalf("hooks/list does not list vigil's hook: %v", r)
	}
	s.call(t, "config/batchWrite", map[string]any{"reloadUserConfig": true, "edits": []any{map[string]any{
		"keyPath": "hooks.state", "mergeStrategy": "upsert",
		"value": map[string]any{key: map[string]any{"trusted_hash": hash}}}}})
}

func (s *appServer) vigil(t *testing.T, args ...string) (string, int) {
	t.Helper()
	g := &gateRun{Running: &agentcli.Running{Home: s.home}, bin: s.bin, gateFile: s.gateFile}
	return g.vigil(t, args...)
}

// waitingRequest waits for the hook's request in the gate.
func (s *appServer) waitingRequest(t *testing.T) gate.Row {
	t.Helper()
	var r gate.Row
	waitFor(t, 90*time.Second, "the PermissionRequest in the gate", func() bool {
		if _, err := os.Stat(s.gateFile); err != nil {
			return false
		}
		h, err := gate.OpenHook(s.gateFile)
		if err != nil {
			return false
		}
		defer h.Close()
		r, err = h.Get(context.Background(), 1)
		return err == nil
	})
	if r.Agent != codexAgent || r.Event != "PermissionRequest" || r.Tool != "Bash" || r.State != gate.StateWaiting ||
		!strings.Contains(r.Input, "echo hi > out.txt") || r.SessionID == "" {
		t.Fatalf("the request in the gate: %+v", r)
	}
	return r
}

func isMethod(name string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == name }
}

// (a) under the app-server: approved in vigil, the PermissionRequest hook
// allows and the command runs without the client being asked.
func TestGateRealCodexAppServerApprove(t *testing.T) {
	s := startAppServer(t, "--timeout", "3m")
	thread := s.startTurn(t)
	if r := s.waitingRequest(t); r.SessionID != thread {
		t.Errorf("the request's session %s, the thread %s", r.SessionID, thread)
	}
	if out, code := s.vigil(t, "approve", "1"); code != 0 || !strings.Contains(out, "approved approval:1") {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	s.until(t, 90*time.Second, "turn/completed", isMethod("turn/completed"))
	if b, err := os.ReadFile(filepath.Join(s.work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Errorf("out.txt after approve: %q %v", b, err)
	}
	for _, m := range s.methods() {
		if strings.HasSuffix(m, "/requestApproval") {
			t.Errorf("the client was asked (%s) though vigil approved", m)
		}
	}
	// Codex wrote its trust into the file; uninstall still finds vigil's
	// group there and leaves Codex's lines alone.
	if out, code := s.vigil(t, "gate", "uninstall", "codex"); code != 0 || !strings.Contains(out, "-[[hooks.PermissionRequest]]") {
		t.Errorf("uninstall after Codex wrote the file: exit %d: %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(s.home, ".codex", "config.toml")); strings.Contains(string(b), "gate --agent codex") || !strings.Contains(string(b), "trusted_hash") {
		t.Errorf("config.toml after uninstall:\n%s", b)
	}
}

// (f) under the app-server: no decision in time, the hook answers nothing
// and Codex asks its client, whose decline stands.
func TestGateRealCodexAppServerNoDecision(t *testing.T) {
	s := startAppServer(t, "--timeout", "3s")
	s.startTurn(t)
	s.waitingRequest(t)
	ask := s.until(t, 90*time.Second, "the client's approval request", isMethod("item/commandExecution/requestApproval"))
	s.send(t, map[string]any{"id": ask["id"], "result": map[string]any{"decision": "decline"}})
	s.until(t, 90*time.Second, "turn/completed", isMethod("turn/completed"))
	if _, err := os.Stat(filepath.Join(s.work, "out.txt")); err == nil {
		t.Error("out.txt exists after the client declined")
	}
	if out, code := s.vigil(t, "approve", "1"); code != ExitDecision || !strings.Contains(out, "not decided: expired: no decision within 3s") {
		t.Errorf("late approve: exit %d: %s", code, out)
	}
}

// (b) under the app-server: denied in vigil with a reason, the command
// does not run, the client is not asked, and the model is sent the reason.
func TestGateRealCodexAppServerDeny(t *testing.T) {
	s := startAppServer(t, "--timeout", "3m")
	s.startTurn(t)
	s.waitingRequest(t)
	if out, code := s.vigil(t, "deny", "1", "--reason", "not on this branch"); code != 0 || !strings.Contains(out, "denied approval:1") {
		t.Fatalf("vigil deny: exit %d: %s", code, out)
	}
	s.until(t, 90*time.Second, "turn/completed", isMethod("turn/completed"))
	if _, err := os.Stat(filepath.Join(s.work, "out.txt")); err == nil {
		t.Error("out.txt exists after a deny")
	}
	for _, m := range s.methods() {
		if strings.HasSuffix(m, "/requestApproval") {
			t.Errorf("the client was asked (%s) though vigil denied", m)
		}
	}
	served := s.srv.Served()
	if len(served) == 0 {
		t.Fatal("the model server handed out no call")
	}
	callID := served[0]
	sent, ok := s.srv.ToolResult(callID)
	if !ok || !strings.Contains(sent, "not on this branch") {
		t.Errorf("the model was sent %q for %s", sent, callID)
	}
	t.Logf("tool output: %s", sent)
}
