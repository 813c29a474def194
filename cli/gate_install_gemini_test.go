package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Gemini CLI settings file with the user's own hooks and the hooks'
// own settings (keys of settings.hooks that are not events: Gemini CLI's
// HOOKS_CONFIG_FIELDS, skipped by HookRegistry.processHooksConfiguration).
const geminiUserSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {
    "enabled": true,
    "disabled": ["noisy"],
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "name": "lint", "command": "/usr/local/bin/lint-write.sh", "timeout": 5000}]}
    ],
    "AfterAgent": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  },
  "general": {"vimMode": true}
}
`

type geminiHookEntry struct {
	Type, Name, Command string
	Timeout             int
}

// geminiHooks reads the hooks of a Gemini CLI settings file: vigil's, the
// others, and the hooks' own settings.
func geminiHooks(t *testing.T, path string) (ours []string, ourEntry geminiHookEntry, others []string, fields map[string]json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	fields = map[string]json.RawMessage{}
	for ev, raw := range s.Hooks {
		if geminiHookFields[ev] {
			var c bytes.Buffer
			json.Compact(&c, raw)
			fields[ev] = c.Bytes()
			continue
		}
		var groups []struct {
			Matcher string            `json:"matcher"`
			Hooks   []geminiHookEntry `json:"hooks"`
		}
		if err := json.Unmarshal(raw, &groups); err != nil {
			t.Fatalf("hooks.%s: %v", ev, err)
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if isGateCommand(h.Command) {
					ours = append(ours, ev+" "+g.Matcher)
					ourEntry = h
				} else {
					others = append(others, ev+" "+h.Command)
				}
			}
		}
	}
	return ours, ourEntry, others, fields
}

// install gemini adds one BeforeTool group beside the user's hooks, with
// Gemini CLI's time limit (milliseconds) a minute past vigil's; again is
// nothing; another matcher replaces it; uninstall leaves the user's hooks.
func TestGateInstallGemini(t *testing.T) {
	h := newHarness(t)
	home := t.TempDir()
	h.env = append(h.env, "GEMINI_CLI_HOME="+home)
	path := filepath.Join(home, ".gemini", "settings.json")
	writeFile(t, path, geminiUserSettings)

	r := h.run("gate", "install", "gemini", "--timeout", "5m")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "+") || !strings.Contains(r.stdout, "gate --agent gemini --timeout 5m0s; exit $?") {
		t.Errorf("install printed no diff: %s", r.stdout)
	}
	ours, e, others, fields := geminiHooks(t, path)
	if len(ours) != 1 || ours[0] != "BeforeTool "+geminiMatcher || len(others) != 2 {
		t.Fatalf("after install: ours %v others %v", ours, others)
	}
	if e.Type != "command" || e.Name != "vigil-gate" || e.Timeout != 360000 || !strings.HasSuffix(e.Command, "; exit $?") {
		t.Errorf("vigil's hook %+v", e)
	}
	if string(fields["enabled"]) != "true" || string(fields["disabled"]) != `["noisy"]` {
		t.Errorf("the hooks' own settings changed: %s", fields)
	}
	if b, _ := os.ReadFile(path + ".vigil-backup"); string(b) != geminiUserSettings {
		t.Errorf("backup %q", b)
	}
	after, _ := os.ReadFile(path)
	if i, j := strings.Index(string(after), `"security"`), strings.Index(string(after), `"general"`); i < 0 || j < i {
		t.Errorf("keys reordered:\n%s", after)
	}

	r = h.run("gate", "install", "gemini", "--timeout", "5m")
	if r.wantCode(t, 0); !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second install: %s", r.stdout)
	}
	if again, _ := os.ReadFile(path); string(again) != string(after) {
		t.Errorf("second install changed the file")
	}

	h.run("gate", "install", "gemini", "--matcher", "run_shell_command").wantCode(t, 0)
	if ours, e, others, _ := geminiHooks(t, path); len(ours) != 1 || ours[0] != "BeforeTool run_shell_command" || e.Timeout != 660000 || len(others) != 2 {
		t.Fatalf("after reinstall: ours %v %+v others %v", ours, e, others)
	}

	h.run("gate", "uninstall", "gemini").wantCode(t, 0)
	ours, _, others, fields = geminiHooks(t, path)
	if len(ours) != 0 || len(others) != 2 || len(fields) != 2 {
		t.Fatalf("after uninstall: ours %v others %v fields %s", ours, others, fields)
	}
	if r := h.run("gate", "uninstall", "gemini"); r.code != 0 || !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second uninstall: %d %s", r.code, r.stdout)
	}
}

// The project scope is ./.gemini/settings.json, created when missing; a
// Claude Code event is refused in one line.
func TestGateInstallGeminiProject(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	t.Chdir(dir)
	h.run("gate", "install", "gemini", "--scope", "project").wantCode(t, 0)
	if ours, _, _, _ := geminiHooks(t, filepath.Join(dir, ".gemini", "settings.json")); len(ours) != 1 {
		t.Fatalf("project install: %v", ours)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gemini", "settings.json.vigil-backup")); err == nil {
		t.Error("a backup of a file that did not exist")
	}
	r := h.run("gate", "install", "gemini", "--event", "PreToolUse")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "BeforeTool") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("--event PreToolUse: exit %d %q", r.code, r.stderr)
	}
}
