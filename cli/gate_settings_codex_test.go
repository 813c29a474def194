package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userCodexConfig has what an edit must leave alone: comments, the user's
// own hook, trust state, inline tables, a multi-line array whose lines
// start with "[" and a multi-line string holding a line that looks like a
// table header.
const userCodexConfig = `# my Codex settings
model = "gpt-5-codex"
notes = """
[[hooks.PreToolUse]]
not a table: inside a string
"""
matrix = [
  [1, 2],
  [3, 4],
]

[model_providers.local]   # a comment after a header
name = "local"
base_url = "http://127.0.0.1:8080/v1"

[[hooks.PreToolUse]]
matcher = "apply_patch"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "/usr/local/bin/audit-patch.sh"

# trust Codex wrote
[hooks.state."/home/u/.codex/config.toml:pre_tool_use:0:0"]
trusted_hash = "sha256:00"

[otel]
exporter = { otlp-http = { endpoint = "http://127.0.0.1:4318/v1/logs", protocol = "json" } }
`

func mustEdit(t *testing.T, old string, add bool, event, matcher string, timeout int) string {
	t.Helper()
	b, err := editCodexConfig([]byte(old), add, event, matcher, "'/opt/my vigil/vigil' gate --agent codex --timeout 10m0s", timeout)
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	return string(b)
}

// The config.toml of the recorded Codex runs (other PreToolUse and
// PermissionRequest groups, Codex's trust state, OTel inline tables):
// install and uninstall leave it as it was.
func TestCodexConfigFixtureRoundTrip(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "agents", "codex", "config.toml"))
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	for _, ev := range []string{"PreToolUse", "PermissionRequest"} {
		got := mustEdit(t, string(b), true, ev, "*", 660)
		m, _ := decodeTOML([]byte(got))
		if gs := hookGroups(m)[ev]; !strings.HasPrefix(got, string(b)) || len(gs) != 2 || !isGateGroup(gs[1]) || isGateGroup(gs[0]) {
			t.Errorf("%s: %v\n%s", ev, gs, got)
		}
		if back := mustEdit(t, got, false, "", "", 0); back != string(b) {
			t.Errorf("%s: uninstall did not give the file back:\n%s", ev, back)
		}
	}
}

// Install appends vigil's group and changes no other byte; installing
// again changes nothing; uninstall gives back the file exactly.
func TestCodexConfigInstallKeepsTheFile(t *testing.T) {
	got := mustEdit(t, userCodexConfig, true, "PreToolUse", "Bash", 660)
	if !strings.HasPrefix(got, userCodexConfig) {
		t.Fatalf("install changed the user's text:\n%s", got)
	}
	want := "\n" + strings.Join(codexGateBlock("PreToolUse", "Bash", "'/opt/my vigil/vigil' gate --agent codex --timeout 10m0s", 660), "")
	if added := got[len(userCodexConfig):]; added != want {
		t.Errorf("added %q, want %q", added, want)
	}
	m, err := decodeTOML([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	gs := hookGroups(m)["PreToolUse"]
	if len(gs) != 2 || gs[0]["matcher"] != "apply_patch" || gs[1]["matcher"] != "Bash" {
		t.Fatalf("PreToolUse groups %v", gs)
	}
	h := gs[1]["hooks"].([]map[string]any)[0]
	if h["type"] != "command" || h["command"] != "'/opt/my vigil/vigil' gate --agent codex --timeout 10m0s" || h["timeout"] != int64(660) {
		t.Errorf("vigil's handler %v", h)
	}
	if again := mustEdit(t, got, true, "PreToolUse", "Bash", 660); again != got {
		t.Errorf("a second install changed the file:\n%s", again)
	}
	if back := mustEdit(t, got, false, "", "", 0); back != userCodexConfig {
		t.Errorf("uninstall did not give the file back:\n%s", back)
	}
	if same := mustEdit(t, userCodexConfig, false, "", "", 0); same != userCodexConfig {
		t.Errorf("uninstall without vigil's hook changed the file")
	}
}

// Installing with other settings replaces vigil's group where it stands:
// a user's group after it keeps its index, which Codex's trust key names
// (discovery.rs: hook_key(source, event, group_index, handler_index)).
func TestCodexConfigReinstallReplacesInPlace(t *testing.T) {
	withGate := mustEdit(t, "", true, "PreToolUse", "Bash", 660)
	user := withGate + `
[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "/usr/local/bin/log-bash.sh"
`
	got := mustEdit(t, user, true, "PreToolUse", "*", 3660)
	m, _ := decodeTOML([]byte(got))
	gs := hookGroups(m)["PreToolUse"]
	if len(gs) != 2 || gs[0]["matcher"] != "*" || !isGateGroup(gs[0]) || isGateGroup(gs[1]) {
		t.Fatalf("groups after reinstall %v\n%s", gs, got)
	}
	if !strings.HasSuffix(got, strings.TrimPrefix(user, withGate)) {
		t.Errorf("the user's group changed:\n%s", got)
	}
	// Another event: vigil's PreToolUse group goes, a PermissionRequest one comes.
	got = mustEdit(t, got, true, "PermissionRequest", "Bash", 660)
	m, _ = decodeTOML([]byte(got))
	if n := countGateGroups(m); n != 1 || len(hookGroups(m)["PermissionRequest"]) != 1 || len(hookGroups(m)["PreToolUse"]) != 1 {
		t.Errorf("after switching events: %d of vigil's groups\n%s", n, got)
	}
}

// Hooks written inline cannot take an [[array table]] after them: the
// edit is refused with the block to add by hand, and nothing is written.
func TestCodexConfigInlineHooksRefused(t *testing.T) {
	inline := "[hooks]\nPreToolUse = [{ matcher = \"x\", hooks = [{ type = \"command\", command = \"true\" }] }]\n"
	_, err := editCodexConfig([]byte(inline), true, "PreToolUse", "Bash", "vigil gate --agent codex", 660)
	if err == nil || !strings.Contains(err.Error(), "add this by hand") || !strings.Contains(err.Error(), "[[hooks.PreToolUse]]") {
		t.Errorf("inline hooks: %v", err)
	}
	if _, err := editCodexConfig([]byte("model = \n"), true, "PreToolUse", "Bash", "vigil gate", 660); err == nil || !strings.Contains(err.Error(), "not TOML") {
		t.Errorf("broken TOML: %v", err)
	}
}

// The command: CODEX_HOME's config.toml, a backup, the diff, the note on
// Codex's hook trust; uninstall takes it out again.
func TestGateInstallCodexCommand(t *testing.T) {
	h := newHarness(t)
	home := t.TempDir()
	h.env = append(h.env, "CODEX_HOME="+home)
	path := filepath.Join(home, "config.toml")
	writeFile(t, path, userCodexConfig)
	r := h.run("gate", "install", "codex", "--event", "PreToolUse", "--matcher", "Bash", "--timeout", "2m")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "+command = ") || !strings.Contains(r.stdout, "gate --agent codex --timeout 2m0s") ||
		!strings.Contains(r.stdout, "+timeout = 180") || !strings.Contains(r.stdout, "/hooks") {
		t.Errorf("install printed %s", r.stdout)
	}
	if b, _ := os.ReadFile(path + ".vigil-backup"); string(b) != userCodexConfig {
		t.Errorf("backup %q", b)
	}
	r = h.run("gate", "install", "codex", "--event", "PreToolUse", "--matcher", "Bash", "--timeout", "2m")
	if r.wantCode(t, 0); !strings.Contains(r.stdout, "nothing to change") {
		t.Errorf("second install: %s", r.stdout)
	}
	h.run("gate", "uninstall", "codex").wantCode(t, 0)
	if b, _ := os.ReadFile(path); string(b) != userCodexConfig {
		t.Errorf("after uninstall:\n%s", b)
	}
}

// --scope project is ./.codex/config.toml, and CODEX_HOME does not move it.
func TestGateInstallCodexProjectScope(t *testing.T) {
	h := newHarness(t)
	h.env = append(h.env, "CODEX_HOME="+t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	h.run("gate", "install", "codex", "--scope", "project").wantCode(t, 0)
	b, err := os.ReadFile(filepath.Join(dir, ".codex", "config.toml"))
	if err != nil || !strings.Contains(string(b), "[[hooks.PermissionRequest]]") || !strings.Contains(string(b), "matcher = \"*\"") {
		t.Fatalf("project config: %q %v", b, err)
	}
	h.run("gate", "uninstall", "codex", "--scope", "project").wantCode(t, 0)
	if b, _ := os.ReadFile(filepath.Join(dir, ".codex", "config.toml")); len(b) != 0 {
		t.Errorf("after uninstall: %q", b)
	}
}
