package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// The explorer as a user meets it on the agents people run: the real CLI
// runs headless against the project's model server while the real vigil
// binary, started in tmux with no store named, finds the CLI's store where
// the CLI keeps it and shows the session live while its slow shell call
// runs, then finished with the call's result, and the token figures the
// server reported (issue 27).
func TestExplorerFollowsTheAgentCLIsInTmux(t *testing.T) {
	for _, c := range []struct {
		cli  string
		call modelserver.Call
	}{
		{"claude-code", modelserver.Call{Name: "Bash", Args: map[string]any{"command": "sleep 6; echo hi > out.txt", "description": "slow write"}}},
		{"codex", modelserver.Call{Name: "exec_command", Args: map[string]any{"cmd": "sleep 6; echo hi > out.txt"}}},
		{"gemini-cli", modelserver.Call{Name: "run_shell_command", Args: map[string]any{"command": "sleep 6 && echo hi > out.txt", "description": "slow write"}}},
		{"opencode", modelserver.Call{Name: "bash", Args: map[string]any{"command": "sleep 6; echo hi > out.txt", "description": "slow write"}}},
	} {
		t.Run(c.cli, func(t *testing.T) {
			a := agentcli.Need(t, c.cli)
			srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:e2e]", Turns: []modelserver.Turn{
				{Calls: []modelserver.Call{c.call}, Usage: modelserver.Usage{Input: 4321, Output: 65}},
				{Text: "Wrote out.txt for you.", Usage: modelserver.Usage{Input: 4400, Output: 12}},
			}}})
			run := a.Start(t, srv.URL, "Watch me write a file. [vigil:e2e]", 120*time.Second)

			// A person starts vigil once the agent has written something: no
			// store named, in an empty directory, so discovery finds what the
			// CLI wrote under its HOME.
			for deadline := time.Now().Add(60 * time.Second); len(run.Store()) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) || run.Exited() {
					t.Fatalf("%s wrote no session file", c.cli)
				}
			}
			dir := t.TempDir()
			env := []string{"HOME=" + run.Home, "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
			// Something is a session, as vigil runs lists it: opencode
			// creates its database, and its schema, before the first
			// session is in it.
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				ls := exec.Command(vigilBinary(t), "runs")
				ls.Dir, ls.Env = dir, append(os.Environ(), env...)
				// A header and a run: "no runs in …" is a store with none yet.
				if out, err := ls.Output(); err == nil && strings.Count(strings.TrimSpace(string(out)), "\n") >= 1 {
					break
				}
				if time.Now().After(deadline) || run.Exited() {
					t.Fatalf("vigil found no %s session", c.cli)
				}
			}
			sh := startTmux(t, dir, append(env, "sh", "-c", "cd "+dir+" && exec "+vigilBinary(t))...)
			sh.waitFor("Watch me write a file", 60*time.Second)
			// Live: the slow call is on screen, running, as the timeline's
			// pending step (the CLIs that write a call only once it ran show
			// the run running without it).
			running := "… running · "
			switch c.cli {
			case "gemini-cli":
				running = "running"
			case "opencode": // its pending row names the tool whose state it gives
				running = "… running bash · bash"
			}
			live := sh.waitFor(running, 30*time.Second)
			if res := run.Wait(); res.Err != nil {
				t.Fatalf("%s: %v\n%s", c.cli, res.Err, res.Stderr)
			}
			// Finished: the run (its state's glyph on the status bar), and the
			// last turn with what the model said and the server's figures.
			// (opencode's store takes decisions: its server's permission
			// requests, so it is not read-only.)
			finished := "read-only · ✓ #"
			if c.cli == "opencode" {
				finished = "opencode.db · ✓ #"
			}
			sh.waitFor(finished, 30*time.Second)
			done := sh.waitFor("Wrote out.txt for you.", 30*time.Second)
			if !strings.Contains(live, "sleep 6") && c.cli != "gemini-cli" {
				t.Errorf("the running call was not on screen while it ran:\n%s", live)
			}
			for _, want := range []string{"4,400"} {
				if !strings.Contains(done, want) {
					t.Errorf("after the run the screen lacks %q:\n%s", want, done)
				}
			}
			if strings.Contains(done, "… running") {
				t.Errorf("a finished run's turn still reads running:\n%s", done)
			}
		})
	}
}
