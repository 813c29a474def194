package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// vigil serve with the real ssh client, each session in tmux: a viewer
// cannot approve (the keys say why), an approver can, the viewer's screen
// shows the approver's decision within a second, a key in neither file is
// refused with a line in the server's log.
func TestServeWithSSHClients(t *testing.T) {
	testkit.Tool(t, "ssh", "the SSH end-to-end test logs in with the real ssh client (openssh-client)")
	testkit.Tool(t, "ssh-keygen", "the SSH end-to-end test makes its keys with ssh-keygen (openssh-client)")
	bin := vigilBinary(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	viewerPub := keygen(t, filepath.Join(dir, "vera"), "vera@laptop")
	approverPub := keygen(t, filepath.Join(dir, "alice"), "alice@desk")
	keygen(t, filepath.Join(dir, "mallory"), "mallory")
	must(t, os.WriteFile(filepath.Join(dir, "viewers"), []byte(viewerPub+"\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "approvers"), []byte(approverPub+"\n"), 0o600))
	port := freeLoopbackPort(t)
	state := filepath.Join(dir, "state")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--store", path, "--listen", "127.0.0.1:"+port,
		"--authorized-keys", filepath.Join(dir, "viewers"), "--approvers", filepath.Join(dir, "approvers"))
	srv.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	stderr, _ := srv.StderrPipe()
	must(t, srv.Start())
	t.Cleanup(func() { cancel(); srv.Wait() })
	var logMu sync.Mutex
	var log []string
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log = append(log, sc.Text())
			logMu.Unlock()
			if strings.Contains(sc.Text(), "listening on") {
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("vigil serve did not start")
	}
	waitLog := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			logMu.Lock()
			for _, l := range log {
				if strings.Contains(l, want) {
					logMu.Unlock()
					return l
				}
			}
			all := strings.Join(log, "\n")
			logMu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("no server log line with %q:\n%s", want, all)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	known := filepath.Join(dir, "known_hosts")
	sshArgs := func(key string) []string {
		return []string{"ssh", "-t", "-p", port, "-i", filepath.Join(dir, key), "-o", "IdentitiesOnly=yes",
			"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + known, "-o", "BatchMode=yes", "127.0.0.1"}
	}

	// A stranger's key: refused, one line.
	out, err := exec.Command("ssh", append(sshArgs("mallory")[1:len(sshArgs("mallory"))-1], "-T", "127.0.0.1", "true")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied (publickey)") {
		t.Errorf("a stranger's key: %v %s", err, out)
	}
	l := waitLog("not in --authorized-keys or --approvers")
	if !strings.Contains(l, "refused 127.0.0.1:") {
		t.Errorf("refusal line %q", l)
	}

	viewer := newSSHTmux(t, "vigil-viewer", 120, 40, nil, sshArgs("vera")...)
	approver := newSSHTmux(t, "vigil-approver", 120, 40, nil, sshArgs("alice")...)
	viewer.waitFor("Coordinate the v2.0 release", 20*time.Second)
	approver.waitFor("Coordinate the v2.0 release", 20*time.Second)
	waitLog("vera@laptop (SHA256:")

	// The viewer tries: the keys say why, nothing is written. (Its first
	// key gives it an explorer of its own, which names it.)
	viewer.keys("6", "g", "j")
	viewer.waitFor("vera@laptop (viewer)", 5*time.Second)
	viewer.waitFor("WRITE CHANGELOG.md", 5*time.Second)
	viewer.waitFor("you are a viewer", 2*time.Second)
	time.Sleep(1600 * time.Millisecond) // the misfire guard
	viewer.keys("a")
	viewer.waitFor("cannot decide: you are a viewer", 3*time.Second)
	viewer.keys("y")
	w, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if q, _ := w.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "2"}); q.Resolved {
		t.Fatalf("a viewer decided: %+v", q)
	}

	// The approver decides; the viewer sees it within a second.
	approver.keys("6", "g", "j")
	approver.waitFor("alice@desk (approver)", 5*time.Second)
	approver.waitFor("WRITE CHANGELOG.md", 5*time.Second)
	time.Sleep(1600 * time.Millisecond)
	approver.keys("a")
	approver.waitFor("Approve write CHANGELOG.md?", 5*time.Second)
	approver.keys("y")
	approver.waitFor("approved: approval 2", 5*time.Second)
	at := time.Now()
	viewer.waitFor("4 waiting", 3*time.Second)
	if d := time.Since(at); d > time.Second {
		t.Errorf("the viewer saw the approval after %s", d)
	}
	if q, _ := w.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "2"}); !q.Resolved || q.Decision != string(store.VerdictApprove) {
		t.Fatalf("approval 2: %+v", q)
	}
	b, err := os.ReadFile(filepath.Join(state, "vigil", "audit.jsonl"))
	if err != nil || !strings.Contains(string(b), `"name":"alice@desk"`) || !strings.Contains(string(b), `"outcome":"won"`) {
		t.Errorf("audit log: %v\n%s", err, b)
	}
}
