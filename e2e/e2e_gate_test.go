package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// (c) of issue 28: a person decides an agent's permission question in the
// explorer with keys. The real CLI runs headless with vigil's hook
// installed by `vigil gate install`; its shell call waits in the gate; the
// real vigil binary in tmux, started with no store named, shows the
// question beside the agent's session; `6 a y` approves it, the command
// runs, and the gate row names the explorer as the channel.
func TestGateDecidedWithKeysInTmux(t *testing.T) {
	for _, c := range []struct {
		cli     string
		install []string
		call    modelserver.Call
		args    func([]string) []string
	}{
		{"claude-code", []string{"claude", "--event", "PreToolUse", "--matcher", "Bash", "--timeout", "3m"},
			modelserver.Call{Name: "Bash", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}, nil},
		{"gemini-cli", []string{"gemini", "--matcher", "run_shell_command", "--timeout", "3m"},
			modelserver.Call{Name: "run_shell_command", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}, nil},
		// Codex runs a hook only once trusted (docs/gate.md#codex): this
		// run trusts it with the flag Codex has for that.
		{"codex", []string{"codex", "--event", "PreToolUse", "--matcher", "Bash", "--timeout", "3m"},
			modelserver.Call{Name: "exec_command", Args: map[string]any{"cmd": "echo hi > out.txt"}},
			func(args []string) []string {
				return append([]string{args[0], "--dangerously-bypass-hook-trust"}, args[1:]...)
			}},
	} {
		t.Run(c.cli, func(t *testing.T) {
			a := agentcli.Need(t, c.cli)
			a.Args = c.args
			bin := vigilBinary(t)
			srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:gate-keys]", Turns: []modelserver.Turn{
				{Calls: []modelserver.Call{c.call}},
				{Text: "Wrote out.txt."},
			}}})
			a.Prepare = func(home, _ string) error {
				cmd := exec.Command(bin, append([]string{"gate", "install"}, c.install...)...)
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("vigil gate install: %v\n%s", err, out)
				}
				return nil
			}
			run := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:gate-keys]", 180*time.Second)
			gateFile := filepath.Join(run.Home, ".local", "state", "vigil", gate.FileName)
			waitGateRow(t, run, gateFile, gate.StateWaiting)

			dir := t.TempDir()
			env := []string{"HOME=" + run.Home, "XDG_STATE_HOME=" + filepath.Join(run.Home, ".local", "state"),
				"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "USER=keys-test"}
			sh := startTmux(t, dir, append(env, "sh", "-c", "cd "+dir+" && exec "+bin)...)
			sh.waitFor("1 waiting", 60*time.Second)
			sh.tmux("send-keys", "-t", sh.session, "6")
			sh.waitFor("echo hi > out.txt", 30*time.Second)
			time.Sleep(1600 * time.Millisecond) // the misfire guard after a new request
			sh.tmux("send-keys", "-t", sh.session, "a")
			sh.waitFor("Approve", 10*time.Second)
			sh.tmux("send-keys", "-t", sh.session, "y")
			sh.waitFor("approved", 10*time.Second)

			if res := run.Wait(); res.Err != nil {
				t.Fatalf("%s: %v\n%s", c.cli, res.Err, res.Stderr)
			}
			if b, err := os.ReadFile(filepath.Join(run.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "hi" {
				t.Fatalf("approved in the explorer, the command did not run: %q %v", b, err)
			}
			row := waitGateRow(t, nil, gateFile, gate.StateApproved)
			if !strings.HasPrefix(row.DecidedBy, "keys-test@") || !strings.HasSuffix(row.DecidedBy, " via the explorer") {
				t.Errorf("the gate row says decided by %q", row.DecidedBy)
			}
		})
	}
}

// waitGateRow waits until the gate's first request is in state, and
// returns it; run, when given, failing first ends the wait.
func waitGateRow(t *testing.T, run *agentcli.Running, path, state string) gate.Row {
	t.Helper()
	var last gate.Row
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if run != nil && run.Exited() {
			res := run.Wait()
			t.Fatalf("the agent ended before its call waited in the gate: %v\n%s", res.Err, res.Stderr)
		}
		if _, err := os.Stat(path); err != nil {
			continue
		}
		h, err := gate.OpenHook(path)
		if err != nil {
			continue
		}
		last, err = h.Get(context.Background(), 1)
		h.Close()
		if err == nil && last.State == state {
			return last
		}
	}
	t.Fatalf("the gate's request never reached %q: %+v", state, last)
	return gate.Row{}
}
