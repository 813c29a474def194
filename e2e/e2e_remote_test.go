package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// vigil ssh://… against a real sshd, in tmux: the remote store tails over
// the link; the link is killed mid-tail, the store is shown offline, a
// commit lands during the outage; the link comes back by itself and the
// screen has that commit and every earlier row once; a decision made
// across the restored link lands in the far store.
func TestRemoteStoreOverSSH(t *testing.T) {
	s := startSSHD(t)
	bin := vigilBinary(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()

	localState := filepath.Join(dir, "local-state")
	tm := newSSHTmux(t, "vigil-remote", 140, 40, []string{"VIGIL_SSH=ssh -F " + s.config, "VIGIL_REMOTE_VIGIL=" + bin,
		"XDG_STATE_HOME=" + localState}, bin, "ssh://vigiltest"+path)
	tm.waitFor("Coordinate the v2.0 release", 20*time.Second)

	must(t, w.CheckpointStep(ctx, "4", harness.StepRecord{Step: 5, Decision: "over-the-link-one", Result: "ok", Tokens: 10}))
	tm.waitFor("over-the-link-one", 5*time.Second)

	if n := s.dropLinks(t); n == 0 {
		t.Fatal("no connection to drop")
	}
	// The status line says it first (it is cut at the width): "NOT CURRENT
	// (as of …): cannot read the store: vigiltest is offline: the link dropped".
	tm.waitFor("NOT CURRENT", 10*time.Second)
	must(t, w.CheckpointStep(ctx, "4", harness.StepRecord{Step: 6, Decision: "while-the-link-was-down", Result: "ok", Tokens: 10}))

	tm.waitFor("while-the-link-was-down", 20*time.Second)
	// The detail pane follows the newest step one read behind the timeline
	// (it showed step 5, whose text is the row counted below).
	scr := tm.waitFor("Step 6", 5*time.Second)
	if n := strings.Count(scr, "over-the-link-one"); n != 1 {
		t.Errorf("the step before the outage is on screen %d times:\n%s", n, scr)
	}
	if strings.Contains(scr, "NOT CURRENT") {
		// The status line says the store is current again.
		scr = tm.waitFor("push", 5*time.Second)
		if strings.Contains(scr, "NOT CURRENT") {
			t.Errorf("still offline after reconnecting:\n%s", scr)
		}
	}

	// A decision across the restored link: approval 2 (CHANGELOG.md).
	tm.keys("6", "g", "j")
	tm.waitFor("WRITE CHANGELOG.md", 5*time.Second)
	time.Sleep(1600 * time.Millisecond) // the misfire guard
	tm.keys("a")
	tm.waitFor("Approve write CHANGELOG.md?", 5*time.Second)
	tm.keys("y")
	tm.waitFor("approved: approval 2", 10*time.Second)
	q, err := w.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "2"})
	if err != nil || !q.Resolved || q.Decision != string(store.VerdictApprove) {
		t.Fatalf("approval 2 in the far store: %+v %v", q, err)
	}
	tm.keys("q")
	// Both machines' audit logs hold it: here, the local user through the
	// URL; there, the account ssh logged in as, through the agent.
	url := "ssh://vigiltest" + path
	local, _ := os.ReadFile(filepath.Join(localState, "vigil", "audit.jsonl"))
	if !strings.Contains(string(local), `"outcome":"attempt"`) || !strings.Contains(string(local), `"channel":"`+url+` (the explorer)","outcome":"won"`) {
		t.Errorf("the local audit log:\n%s", local)
	}
	far, _ := os.ReadFile(filepath.Join(s.farState, "vigil", "audit.jsonl"))
	if !strings.Contains(string(far), `"store":"`+path+`"`) || !strings.Contains(string(far), `"channel":"vigil agent over ssh from 127.0.0.1 port`) ||
		!strings.Contains(string(far), `"outcome":"won"`) {
		t.Errorf("the far audit log:\n%s", far)
	}
}

// A far side without vigil: one line, exit 1.
func TestRemoteWithoutVigil(t *testing.T) {
	s := startSSHD(t)
	bin := vigilBinary(t)
	cmd := exec.Command(bin, "ssh://vigiltest/tmp/none.sqlite3")
	cmd.Env = append(os.Environ(), "VIGIL_SSH=ssh -F "+s.config, "VIGIL_REMOTE_VIGIL=/nonexistent/vigil")
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 || !strings.Contains(string(out), "vigil is not installed on vigiltest") {
		t.Errorf("%v: %q", err, out)
	}
}
