package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// (c) for opencode: the explorer in tmux decides a permission request
// that waits in a real `opencode serve` with keys — the approvals pane,
// a, y — and the command runs.
func TestExplorerApprovesOpencodePermissionInTmux(t *testing.T) {
	a := agentcli.Need(t, "opencode")
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:e2e]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "bash", Args: map[string]any{"command": "echo ok > approved.txt", "description": "write approved.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = agentcli.OpencodePermissions(map[string]any{"bash": "ask", "edit": "allow"})
	s := a.Serve(t, srv.URL, 240*time.Second)
	s.Prompt(t, "Write ok. [vigil:e2e]")
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var perms []any
		if res, err := http.Get(s.URL + "/permission"); err == nil {
			json.NewDecoder(res.Body).Decode(&perms)
			res.Body.Close()
		}
		if len(perms) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no permission request waited in opencode serve")
		}
	}
	dir := t.TempDir()
	db := filepath.Join(s.Home, ".local", "share", "opencode", "opencode.db")
	env := []string{"HOME=" + dir, "USER=vigil-test", "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"VIGIL_STORE=" + db, "VIGIL_OPENCODE_URL=" + s.URL}
	sh := startTmux(t, dir, append(env, "sh", "-c", "cd "+dir+" && exec "+vigilBinary(t))...)
	sh.waitFor("bash: echo ok > approved.txt", 60*time.Second)
	sh.tmux("send-keys", "-t", sh.session, "6") // the approvals pane
	// The misfire guard holds keys a moment after the pane is focused: a
	// is pressed again until the pane asks to confirm.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		sh.tmux("send-keys", "-t", sh.session, "a")
		time.Sleep(300 * time.Millisecond)
		if scr := sh.screen(); strings.Contains(scr, "y yes") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the approvals pane never asked to confirm:\n%s", scr)
		}
	}
	sh.tmux("send-keys", "-t", sh.session, "y")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(s.Work, "approved.txt")); err == nil && strings.TrimSpace(string(b)) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("approved.txt was not written after the explorer approved:\n%s", sh.screen())
		}
	}
	sh.waitFor("nothing waits on a human", 30*time.Second)
	b, err := os.ReadFile(filepath.Join(dir, "state", "vigil", "audit.jsonl"))
	if err != nil || !strings.Contains(string(b), `"outcome":"won"`) || !strings.Contains(string(b), "the explorer") {
		t.Errorf("the audit log after the explorer's approval: %s %v", b, err)
	}
}
