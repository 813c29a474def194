package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
	"github.com/vigil-run/vigil/store/gate"
)

// Item 6 of issue 28: Claude Code's PermissionRequest carries
// permission_suggestions (what its own prompt's "yes, and don't ask again"
// would change); `vigil approve --always` returns them as the answer's
// updatedPermissions, so the same command the model runs next is not
// asked about again. Bash is taken off the rig's pre-allowed tools so
// that Claude Code asks.
func TestGateRealClaudeApproveAlways(t *testing.T) {
	a := agentcli.Need(t, "claude-code")
	bin := vigilBinary(t)
	// A command Claude Code offers a rule for ("Bash(git init *)" in the
	// project's local settings); without the rule it asks every time.
	cmd := map[string]any{"command": "git init -q", "description": "make a repository"}
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:always]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "Bash", Args: cmd}}},
		{Calls: []modelserver.Call{{Name: "Bash", Args: cmd}}},
		{Text: "Made it twice."},
	}}})
	a.Args = func(args []string) []string {
		i := slices.Index(args, "Bash")
		return slices.Delete(args, i, i+1)
	}
	a.Prepare = func(home, _ string) error {
		return installForTestEvent(bin, home, "PermissionRequest", "--timeout", "2m")
	}
	r := a.Start(t, srv.URL, "Make a repository, twice. [vigil:always]", 180*time.Second)
	g := &gateRun{Running: r, bin: bin, srv: srv, gateFile: filepath.Join(r.Home, ".local", "state", "vigil", gate.FileName)}
	row := g.waiting(t)
	if row.Event != "PermissionRequest" || row.Suggestions == "" {
		t.Fatalf("the request carries no suggestions: %+v", row)
	}
	out, code := g.vigil(t, "runs", "--json")
	if code != 0 || !strings.Contains(out, `"always_allow"`) {
		t.Fatalf("vigil runs --json names no always-allow (exit %d):\n%s", code, out)
	}
	out, code = g.vigil(t, "approve", "1", "--always")
	if code != 0 || !strings.Contains(out, "from now on: allow Bash(git init *)") {
		t.Fatalf("vigil approve --always: exit %d: %s", code, out)
	}
	// The second call must not be asked about: a second row fails at once.
	h, err := gate.OpenHook(g.gateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for !g.Exited() {
		if second, err := h.Get(context.Background(), 2); err == nil {
			t.Fatalf("the same command was asked about again after --always (suggestions %s): %+v", row.Suggestions, second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res := g.Wait(); res.Err != nil {
		t.Fatalf("claude: %v\n%s", res.Err, tailOf(res.Stderr))
	}
	if _, err := os.Stat(filepath.Join(g.Work, ".git")); err != nil {
		t.Fatalf("approved, the command did not run: %v", err)
	}
	// Claude Code kept the rule where its suggestion said.
	if b, err := os.ReadFile(filepath.Join(g.Work, ".claude", "settings.local.json")); err != nil || !strings.Contains(string(b), "git init *") {
		t.Errorf("the project's local settings hold no rule: %q %v", b, err)
	}
	if got, _ := h.Get(context.Background(), 1); !got.Always || got.State != gate.StateApproved {
		t.Errorf("the row does not record the always-allow: %+v", got)
	}
}
