package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

// sqlite3CLI runs sql on the store at path through the sqlite3 shell: the
// foreign writer and reader here.
func sqlite3CLI(t *testing.T, path, sql string) string {
	t.Helper()
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	out, err := exec.Command("sqlite3", "-cmd", ".timeout 5000", path, sql).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

// fixtureAt builds the fixture store and moves it to dir/name.
func fixtureAt(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	p, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, name)
	for _, suf := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(p+suf, to+suf); err != nil && suf == "" {
			t.Fatal(err)
		}
	}
	return to
}

// vigil here.sqlite3 ssh://…/far.sqlite3 against a real sshd, in tmux:
// one runs list naming both stores; the link to far is killed, far alone
// is offline while here keeps tailing (a step sqlite3 commits to here
// shows up, nothing says NOT CURRENT); far comes back by itself; an
// approval of far's is decided across the restored link and lands in
// far's file, here's own approval of the same id untouched.
func TestSeveralStoresOneOverSSH(t *testing.T) {
	s := startSSHD(t)
	bin := vigilBinary(t)
	here, far := fixtureAt(t, "here.sqlite3"), fixtureAt(t, "far.sqlite3")

	localState := t.TempDir()
	tm := newSSHTmux(t, "vigil-several", 160, 44, []string{"VIGIL_SSH=ssh -F " + s.config, "VIGIL_REMOTE_VIGIL=" + bin,
		"XDG_STATE_HOME=" + localState}, bin, here, "ssh://vigiltest"+far, "--run", "here/4")
	tm.waitFor("2 stores", 20*time.Second)
	scr := tm.waitFor("STORE", 20*time.Second)
	for _, want := range []string{"STORE", " here ", " far "} {
		if !strings.Contains(scr, want) {
			t.Fatalf("the screen lacks %q:\n%s", want, scr)
		}
	}

	sqlite3CLI(t, here, "INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (4, 5, 'here-before', 'ok', 10)")
	tm.waitFor("here-before", 10*time.Second)

	if n := s.dropLinks(t); n == 0 {
		t.Fatal("no connection to drop")
	}
	tm.waitFor("far offline", 10*time.Second)
	sqlite3CLI(t, here, "INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (4, 6, 'here-while-far-is-offline', 'ok', 10)")
	sqlite3CLI(t, far, "INSERT INTO steps (run_id, step, decision, result, tokens) VALUES (4, 6, 'far-during-the-outage', 'ok', 10)")
	scr = tm.waitFor("here-while-far-is-offline", 10*time.Second)
	if strings.Contains(scr, "NOT CURRENT") {
		t.Errorf("one store offline made the whole picture not current:\n%s", scr)
	}
	if !strings.Contains(scr, "✕ far") {
		t.Errorf("far's rows are not marked offline:\n%s", scr)
	}

	// Back by itself (1 s after the drop, then 2 s, …).
	deadline := time.Now().Add(30 * time.Second)
	down := time.Now()
	for scr = tm.screen(); strings.Contains(scr, "far offline") || !strings.Contains(scr, "2 stores"); scr = tm.screen() {
		if time.Now().After(deadline) {
			t.Fatalf("far never came back:\n%s", scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("far back %v after the outage was seen", time.Since(down).Round(100*time.Millisecond))
	// far resumed from its cursor (here was not loaded again): here's
	// timeline holds each of its steps once.
	deadline = time.Now().Add(10 * time.Second)
	for scr = tm.screen(); !strings.Contains(scr, "5 here-before") || !strings.Contains(scr, "6 here-while-far-is-offline"); scr = tm.screen() {
		if time.Now().After(deadline) {
			t.Fatalf("here's timeline after far came back:\n%s", scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := strings.Count(scr, "5 here-before"); n != 1 {
		t.Errorf("here's step before the outage is on screen %d times:\n%s", n, scr)
	}

	// far's step committed during the outage is counted once far is back.
	farRow := regexp.MustCompile(`#4\s+far\s+Coordinate the v2\.0 release\s+12\s`)
	deadline = time.Now().Add(10 * time.Second)
	for scr = tm.screen(); !farRow.MatchString(scr); scr = tm.screen() {
		if time.Now().After(deadline) {
			t.Fatalf("far's run 4 does not count the step committed during the outage (12 steps):\n%s", scr)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// far's approval 2 (CHANGELOG.md), across the restored link.
	tm.keys("6", "g")
	for i := 0; i < 8 && !strings.Contains(tm.screen(), "approval far/2"); i++ {
		tm.keys("j")
	}
	selected := ""
	for i := 0; i < 8; i++ {
		scr = tm.screen()
		if strings.Contains(scr, "WRITE CHANGELOG.md") && strings.Contains(scr, "asked by #far/") {
			selected = scr
			break
		}
		tm.keys("j")
	}
	if selected == "" {
		t.Fatalf("far's CHANGELOG.md approval never came under the cursor:\n%s", scr)
	}
	time.Sleep(1600 * time.Millisecond) // the misfire guard
	tm.keys("a")
	tm.waitFor("Approve write CHANGELOG.md?", 5*time.Second)
	tm.keys("y")
	tm.waitFor("approved: approval far/2", 10*time.Second)
	if got := sqlite3CLI(t, far, "SELECT resolved FROM pending_approvals WHERE id = 2"); got != "approve" {
		t.Errorf("far's file holds %q for approval 2; want approve", got)
	}
	if got := sqlite3CLI(t, here, "SELECT coalesce(resolved, 'undecided') FROM pending_approvals WHERE id = 2"); got != "undecided" {
		t.Errorf("here's own approval 2 holds %q; want it undecided", got)
	}
	tm.keys("q")
	// The decision on far is in this machine's audit log under far's URL
	// (the store's own id: approval 2), and in far's.
	local, _ := os.ReadFile(filepath.Join(localState, "vigil", "audit.jsonl"))
	if !strings.Contains(string(local), `"store":"ssh://vigiltest`+far+`","request":"approval 2"`) || !strings.Contains(string(local), `"outcome":"won"`) {
		t.Errorf("the local audit log:\n%s", local)
	}
	farLog, _ := os.ReadFile(filepath.Join(s.farState, "vigil", "audit.jsonl"))
	if !strings.Contains(string(farLog), `"outcome":"won"`) {
		t.Errorf("far's audit log:\n%s", farLog)
	}
}
