package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// Item 7 of issue 28: vigil serve, started with no store named on the
// machine where a colleague's Claude Code runs, serves the stores found
// there, the gate among them. Over the real ssh client, a viewer sees the
// colleague's `git push` waiting and cannot decide it; an approver's keys
// decide it from their own terminal, the command runs, and the gate row
// names the approver and the ssh channel.
func TestGateDecidedOverServe(t *testing.T) {
	testkit.Tool(t, "ssh", "the test logs in with the real ssh client (openssh-client)")
	testkit.Tool(t, "ssh-keygen", "the test makes its keys with ssh-keygen (openssh-client)")
	a := agentcli.Need(t, "claude-code")
	bin := vigilBinary(t)
	push := "git push --dry-run origin main 2>/dev/null; echo pushed > out.txt"
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:gate-serve]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "Bash", Args: map[string]any{"command": push, "description": "push the release"}}}},
		{Text: "Pushed."},
	}}})
	a.Prepare = func(home, _ string) error {
		cmd := exec.Command(bin, "gate", "install", "claude", "--event", "PreToolUse", "--matcher", "Bash", "--timeout", "3m")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("vigil gate install: %v\n%s", err, out)
		}
		return nil
	}
	run := a.Start(t, srv.URL, "Push the release. [vigil:gate-serve]", 180*time.Second)
	gateFile := filepath.Join(run.Home, ".local", "state", "vigil", gate.FileName)
	waitGateRow(t, run, gateFile, gate.StateWaiting)

	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "viewers"), []byte(keygen(t, filepath.Join(dir, "vera"), "vera@laptop")+"\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "approvers"), []byte(keygen(t, filepath.Join(dir, "alice"), "alice@desk")+"\n"), 0o600))
	port := freeLoopbackPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:"+port,
		"--authorized-keys", filepath.Join(dir, "viewers"), "--approvers", filepath.Join(dir, "approvers"))
	server.Dir = dir
	server.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + run.Home, "XDG_STATE_HOME=" + filepath.Join(run.Home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
	stderr, _ := server.StderrPipe()
	must(t, server.Start())
	t.Cleanup(func() { cancel(); server.Wait() })
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				listening <- sc.Text()
			}
		}
	}()
	select {
	case l := <-listening:
		if !strings.Contains(l, gate.FileName) {
			t.Fatalf("serve with no store named does not serve the gate: %s", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("vigil serve did not start")
	}
	known := filepath.Join(dir, "known_hosts")
	sshArgs := func(key string) []string {
		return []string{"ssh", "-t", "-p", port, "-i", filepath.Join(dir, key), "-o", "IdentitiesOnly=yes",
			"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + known, "-o", "BatchMode=yes",
			"127.0.0.1", gate.FileName}
	}

	viewer := newSSHTmux(t, "vigil-gate-viewer", 120, 40, nil, sshArgs("vera")...)
	viewer.waitFor("1 waiting", 30*time.Second)
	viewer.keys("6")
	viewer.waitFor("git push --dry-run", 10*time.Second)
	time.Sleep(1600 * time.Millisecond) // the misfire guard
	viewer.keys("a")
	viewer.waitFor("cannot decide: you are a viewer", 5*time.Second)
	viewer.keys("y")
	time.Sleep(500 * time.Millisecond)
	if row := waitGateRow(t, run, gateFile, gate.StateWaiting); row.State != gate.StateWaiting {
		t.Fatalf("a viewer decided: %+v", row)
	}

	approver := newSSHTmux(t, "vigil-gate-approver", 120, 40, nil, sshArgs("alice")...)
	approver.waitFor("1 waiting", 30*time.Second)
	approver.keys("6")
	approver.waitFor("git push --dry-run", 10*time.Second)
	time.Sleep(1600 * time.Millisecond)
	approver.keys("a")
	approver.waitFor("Approve", 5*time.Second)
	approver.keys("y")
	approver.waitFor("approved", 10*time.Second)

	if res := run.Wait(); res.Err != nil {
		t.Fatalf("claude: %v\n%s", res.Err, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(run.Work, "out.txt")); err != nil || strings.TrimSpace(string(b)) != "pushed" {
		t.Fatalf("approved over serve, the command did not run: %q %v", b, err)
	}
	row := waitGateRow(t, nil, gateFile, gate.StateApproved)
	if !strings.HasPrefix(row.DecidedBy, "alice@desk via ssh 127.0.0.1:") || !strings.Contains(row.DecidedBy, "(vigil serve)") {
		t.Errorf("the gate row says decided by %q", row.DecidedBy)
	}
	viewer.waitFor("approved", 10*time.Second)
}
