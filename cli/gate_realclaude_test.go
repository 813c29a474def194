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
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

var gateBin struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// vigilBinary builds vigil once: the hook Claude Code runs is the real
// command.
func vigilBinary(t *testing.T) string {
	t.Helper()
	gateBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-gate-bin-")
		if err != nil {
			gateBin.err = err
			return
		}
		gateBin.path = filepath.Join(dir, "vigil")
		gateBin.out, gateBin.err = exec.Command("go", "build", "-o", gateBin.path, "..").CombinedOutput()
	})
	if gateBin.err != nil {
		t.Fatalf("build: %v\n%s", gateBin.err, gateBin.out)
	}
	return gateBin.path
}

// gateRun is a real Claude Code run whose Bash call waits in the gate.
type gateRun struct {
	*agentcli.Running
	bin, gateFile string
	srv           *modelserver.Server
}

// env is the environment vigil runs in beside the agent: its HOME, so its
// gate store and audit log are the run's.
func (g *gateRun) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + g.Home, "USER=vigil-test",
		"XDG_STATE_HOME=" + filepath.Join(g.Home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(g.Home, ".config"), "VIGIL_STORE=" + g.gateFile}
}

func (g *gateRun) vigil(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(g.bin, args...)
	cmd.Env = g.env()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// startGated starts Claude Code with vigil's PreToolUse hook installed
// (hookArgs after "gate"), its model scripted to run `echo hi > out.txt`.
func startGated(t *testing.T, hookArgs ...string) *gateRun {
	t.Helper()
	a := agentcli.Need(t, "claude-code")
	bin := vigilBinary(t)
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "Bash", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = func(home, work string) error {
		return installForTest(bin, home, hookArgs)
	}
	r := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 120*time.Second)
	return &gateRun{Running: r, bin: bin, srv: srv, gateFile: filepath.Join(r.Home, ".local", "state", "vigil", gate.FileName)}
}

// waiting waits for the run's request to wait in the gate and returns it.
func (g *gateRun) waiting(t *testing.T) gate.Row {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !g.Exited() {
		if _, err := os.Stat(g.gateFile); err == nil {
			h, err := gate.OpenHook(g.gateFile)
			if err == nil {
				r, err := h.Get(context.Background(), 1)
				h.Close()
				if err == nil {
					return r
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	res := g.Wait()
	t.Fatalf("no request waited in the gate; claude exited %v:\n%s", res.Err, tailOf(res.Stderr))
	return gate.Row{}
}

func tailOf(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func checkRequest(t *testing.T, r gate.Row) {
	t.Helper()
	if r.State != gate.StateWaiting || r.Agent != gate.AgentClaudeCode || r.Event != "PreToolUse" || r.Tool != "Bash" ||
		!strings.Contains(r.Input, `"command":"echo hi > out.txt"`) || !strings.HasPrefix(r.ToolUseID, "toolu_") || r.SessionID == "" {
		t.Fatalf("the request in the gate: %+v", r)
	}
}

// transcriptResult is the tool_result Claude Code recorded for call id.
func transcriptResult(t *testing.T, g *gateRun, id string) (string, bool) {
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
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "user" {
				continue
			}
			var blocks []struct {
				Type    string          `json:"type"`
				ID      string          `json:"tool_use_id"`
				Content json.RawMessage `json:"content"`
				IsError bool            `json:"is_error"`
			}
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool_result" && b.ID == id {
					return string(b.Content), b.IsError
				}
			}
		}
	}
	t.Fatalf("no tool_result for %s in %v", id, g.Store())
	return "", false
}

// auditRecords reads the run's audit log.
func auditRecords(t *testing.T, g *gateRun) []audit.Record {
	t.Helper()
	dir, err := audit.StateDir(func(k string) string {
		for _, kv := range g.env() {
			if kk, v, _ := strings.Cut(kv, "="); kk == k {
				return v
			}
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return auditlog.Read(t, filepath.Join(dir, audit.FileName))
}

// (a) vigil approve: the command runs, and the audit log names who decided.
func TestGateRealClaudeApprove(t *testing.T) {
	g := startGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkRequest(t, r)
	if _, err := os.Stat(filepath.Join(g.Work, "out.txt")); err == nil {
		t.Fatal("out.txt was written while the call waited in the gate")
	}
	out, code := g.vigil(t, "approve", "1")
	if code != 0 || !strings.Contains(out, "approved approval:1") {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	res := g.Wait()
	if res.Err != nil {
		t.Fatalf("claude: %v\n%s", res.Err, tailOf(res.Stderr))
	}
	if b, err := os.ReadFile(filepath.Join(res.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("out.txt after approve: %q %v", b, err)
	}
	recs := auditRecords(t, g)
	last := recs[len(recs)-1]
	if len(recs) != 2 || recs[0].Outcome != audit.Attempt {
		t.Errorf("audit log: want an attempt, then the outcome: %+v", recs)
	}
	if last.Outcome != audit.Won || !strings.HasPrefix(last.Who.Name, "vigil-test@") || last.Request != "approval 1" || last.Verdict != "approve" || last.Channel != "vigil approve" {
		t.Errorf("audit log %+v", recs)
	}
}

// (b) vigil deny --reason: the command does not run, and the transcript's
// tool_result carries the reason.
func TestGateRealClaudeDeny(t *testing.T) {
	g := startGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkRequest(t, r)
	out, code := g.vigil(t, "deny", "1", "--reason", "no")
	if code != 0 || !strings.Contains(out, "denied approval:1") {
		t.Fatalf("vigil deny: exit %d: %s", code, out)
	}
	res := g.Wait()
	if _, err := os.Stat(filepath.Join(res.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after a deny")
	}
	content, _ := transcriptResult(t, g, r.ToolUseID)
	var text string
	if json.Unmarshal([]byte(content), &text) != nil {
		text = content
	}
	if !strings.HasSuffix(strings.TrimSpace(text), ": no") {
		t.Errorf("the tool_result does not carry the reason: %s", content)
	}
	t.Logf("tool_result: %s", content)
}

// installForTest installs the PreToolUse hook into HOME's Claude Code
// settings with `vigil gate install`, the built binary.
func installForTest(bin, home string, hookArgs []string) error {
	return installForTestEvent(bin, home, "PreToolUse", hookArgs...)
}

func installForTestEvent(bin, home, event string, hookArgs ...string) error {
	cmd := exec.Command(bin, append([]string{"gate", "install", "claude", "--event", event, "--matcher", "Bash"}, hookArgs...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("vigil gate install: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "+") {
		return fmt.Errorf("vigil gate install printed no change: %s", out)
	}
	return nil
}

// (d) Two deciders race, as two processes: exactly one wins, the other is
// told it lost, and the agent does what the winner said.
func TestGateRealClaudeRace(t *testing.T) {
	g := startGated(t, "--timeout", "2m")
	checkRequest(t, g.waiting(t))
	raceDeciders(t, g)
	var outcomes []string
	for _, r := range auditRecords(t, g) {
		outcomes = append(outcomes, r.Outcome)
	}
	if strings.Count(strings.Join(outcomes, " "), audit.Won) != 1 || strings.Count(strings.Join(outcomes, " "), audit.Lost) != 1 {
		t.Errorf("audit outcomes %v: want one won, one lost", outcomes)
	}
}

// (e) The agent is killed while its hook waits: the request reads
// withdrawn, and a late approve is refused with that reason.
func TestGateRealClaudeKilled(t *testing.T) {
	g := startGated(t, "--timeout", "2m")
	r := g.waiting(t)
	checkRequest(t, r)
	killWhileWaiting(t, g, r)
}

// (f) No decision within --timeout: PreToolUse answers "ask", which a
// headless Claude Code cannot put to anyone, so nothing runs; the request
// reads expired and a late approve is refused with that reason.
func TestGateRealClaudeTimeout(t *testing.T) {
	g := startGated(t, "--timeout", "2s")
	r := g.waiting(t)
	checkRequest(t, r)
	run := g.Wait()
	if _, err := os.Stat(filepath.Join(run.Work, "out.txt")); err == nil {
		t.Fatal("out.txt exists after the gate timed out")
	}
	content, _ := transcriptResult(t, g, r.ToolUseID)
	t.Logf("tool_result: %s", content)
	out, code := g.vigil(t, "approve", "1")
	if code != ExitDecision || !strings.Contains(out, "not decided: expired: no decision within 2s") {
		t.Fatalf("late approve: exit %d: %s", code, out)
	}
}

// raceDeciders has two processes decide approval 1 at once, one approving,
// one denying: exactly one wins, the other is told it lost and what won,
// and the agent does what the winner said (out.txt is written only after
// an approve).
func raceDeciders(t *testing.T, g *gateRun) {
	t.Helper()
	type result struct {
		out  string
		code int
	}
	res := make([]result, 2)
	var wg sync.WaitGroup
	for i, args := range [][]string{{"approve", "1"}, {"deny", "1", "--reason", "no"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].out, res[i].code = g.vigil(t, args...)
		}()
	}
	wg.Wait()
	won, lost := -1, -1
	for i, r := range res {
		switch {
		case r.code == 0:
			won = i
		case r.code == ExitDecision && strings.Contains(r.out, "approval:1 was already decided"):
			lost = i
		}
	}
	if won < 0 || lost < 0 || won == lost {
		t.Fatalf("want one winner and one told it lost: %+v", res)
	}
	if want := []string{"approve", "deny"}[won]; !strings.Contains(res[lost].out, "already decided: "+want) {
		t.Errorf("the loser was told %q, the winner was %d", res[lost].out, won)
	}
	run := g.Wait()
	_, err := os.Stat(filepath.Join(run.Work, "out.txt"))
	if ran := err == nil; ran != (won == 0) {
		t.Errorf("out.txt exists %v, but the winner was %v", ran, res[won].out)
	}
}

// killWhileWaiting kills the agent while its request r waits in the gate:
// the request reads withdrawn, a late approve is refused with that reason,
// and the command never ran.
func killWhileWaiting(t *testing.T, g *gateRun, r gate.Row) {
	t.Helper()
	g.Kill()
	g.Wait()
	out, code := g.vigil(t, "show", r.SessionID, "--json")
	if code != 0 || !strings.Contains(out, `"withdrawn"`) {
		t.Errorf("vigil show after the kill: exit %d: %s", code, out)
	}
	out, code = g.vigil(t, "approve", "1")
	if code != ExitDecision || !strings.Contains(out, "approval:1 not decided: withdrawn: the agent") {
		t.Fatalf("late approve: exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(g.Work, "out.txt")); err == nil {
		t.Error("out.txt exists after the agent was killed")
	}
}
