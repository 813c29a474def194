package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const userSettings = `{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit-bash.sh"}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  },
  "permissions": {"allow": ["Read"]}
}
`

func gateCommands(t *testing.T, path string) (ours, others []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]hookGroup `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for ev, gs := range s.Hooks {
		for _, g := range gs {
			for _, h := range g.Hooks {
				if isGateCommand(h.Command) {
					ours = append(ours, ev+" "+g.Matcher+" "+h.Command)
				} else {
					others = append(others, ev+" "+h.Command)
				}
			}
		}
	}
	return ours, others
}

// install twice is one hook; the user's other hooks and keys stay, in
// their order; a backup is kept; uninstall leaves exactly the user's hooks.
func TestGateInstallIdempotent(t *testing.T) {
	h := newHarness(t)
	cfg := t.TempDir()
	h.env = append(h.env, "CLAUDE_CONFIG_DIR="+cfg)
	path := filepath.Join(cfg, "settings.json")
	writeFile(t, path, userSettings)

	r := h.run("gate", "install", "claude", "--event", "PreToolUse", "--matcher", "Bash")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "+") || !strings.Contains(r.stdout, "gate --agent claude --timeout 10m0s") {
		t.Errorf("install printed no diff: %s", r.stdout)
	}
	ours, others := gateCommands(t, path)
	if len(ours) != 1 || !strings.HasPrefix(ours[0], "PreToolUse Bash ") || len(others) != 2 {
		t.Fatalf("after install: ours %v others %v", ours, others)
	}
	if b, _ := os.ReadFile(path + ".vigil-backup"); string(b) != userSettings {
		t.Errorf("backup %q", b)
	}
	after, _ := os.ReadFile(path)
	if i, j := strings.Index(string(after), `"model"`), strings.Index(string(after), `"permissions"`); i < 0 || j < i {
		t.Errorf("keys reordered:\n%s", after)
	}

	r = h.run("gate", "install", "claude", "--event", "PreToolUse", "--matcher", "Bash")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second install: %s", r.stdout)
	}
	if again, _ := os.ReadFile(path); string(again) != string(after) {
		t.Errorf("second install changed the file")
	}

	// Moving to another event replaces the hook, never adds a second.
	h.run("gate", "install", "claude").wantCode(t, 0)
	if ours, others := gateCommands(t, path); len(ours) != 1 || !strings.HasPrefix(ours[0], "PermissionRequest * ") || len(others) != 2 {
		t.Fatalf("after reinstall: ours %v others %v", ours, others)
	}

	r = h.run("gate", "uninstall", "claude")
	r.wantCode(t, 0)
	ours, others = gateCommands(t, path)
	if len(ours) != 0 || len(others) != 2 {
		t.Fatalf("after uninstall: ours %v others %v", ours, others)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "PermissionRequest") {
		t.Errorf("an empty event left behind:\n%s", b)
	}
	r = h.run("gate", "uninstall", "claude")
	if r.wantCode(t, 0); !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second uninstall: %s", r.stdout)
	}
}

// A settings file vigil cannot read is refused in one line, untouched.
func TestGateInstallBadSettings(t *testing.T) {
	h := newHarness(t)
	cfg := t.TempDir()
	h.env = append(h.env, "CLAUDE_CONFIG_DIR="+cfg)
	path := filepath.Join(cfg, "settings.json")
	writeFile(t, path, "[1,2]")
	r := h.run("gate", "install", "claude")
	if r.code == 0 || !strings.Contains(r.stderr, "not a JSON object") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d: %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "[1,2]" {
		t.Errorf("file changed: %q", b)
	}
	if h.run("gate", "install", "claude", "--scope", "team").code != ExitUsage {
		t.Error("--scope team accepted")
	}
}

// Install makes the gate store when there is none, so an explorer started
// before the agent's first question already reads it: a bare `vigil runs`
// right after install finds it.
func TestGateInstallMakesTheGateStore(t *testing.T) {
	h := newHarness(t)
	home := t.TempDir()
	h.env = []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude")}
	t.Chdir(t.TempDir())
	file := filepath.Join(home, ".local", "state", "vigil", "gate.db")
	r := h.run("gate", "install", "claude")
	r.wantCode(t, 0)
	contains(t, r.stdout, "questions will wait in "+file+"\n")
	r = h.run("runs")
	r.wantCode(t, 0)
	contains(t, r.stdout+r.stderr, file)
	// Once there, install leaves it be.
	r = h.run("gate", "install", "claude", "--event", "PreToolUse")
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, "questions will wait") {
		t.Errorf("install made the store again: %s", r.stdout)
	}
}
