package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/spf13/cobra"
)

// geminiMatcher is the tools install gates by default: those that run or
// change something (Gemini CLI matches the tool name as a regular
// expression).
const geminiMatcher = "^(run_shell_command|write_file|replace)$"

// geminiHookName names vigil's hook in Gemini CLI's settings (its
// hooks.disabled list and its messages go by name).
const geminiHookName = "vigil-gate"

// geminiHookFields are the keys of settings.hooks that are not events
// (Gemini CLI's HOOKS_CONFIG_FIELDS): left as they are.
var geminiHookFields = map[string]bool{"enabled": true, "disabled": true, "notifications": true}

// geminiSettingsPath is the settings file of a scope, as Gemini CLI finds
// it (Storage.getGlobalSettingsPath: $GEMINI_CLI_HOME, else HOME).
func (a *app) geminiSettingsPath(scope string) (string, error) {
	switch scope {
	case "user":
		home := a.getenv("GEMINI_CLI_HOME")
		if home == "" {
			home = a.getenv("HOME")
		}
		if home == "" {
			return "", errors.New("cannot tell where Gemini CLI's settings are: $HOME is not set")
		}
		return filepath.Join(home, ".gemini", "settings.json"), nil
	case "project":
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".gemini", "settings.json"), nil
	}
	return "", usagef("--scope %q: give user or project", scope)
}

// geminiHookCommand is the command install writes. Gemini CLI runs it
// with bash -c and reads a hook killed by a signal as exit 0, so a gate
// killed outright would let the call run; "; exit $?" keeps bash as its
// parent, which then exits 128+signal, a status Gemini CLI takes as a
// deny.
func geminiHookCommand(exe string, timeout time.Duration) string {
	return fmt.Sprintf("%s gate --agent gemini --timeout %s; exit $?", shellQuote(exe), timeout)
}

func (a *app) gateInstallGemini(cmd *cobra.Command, o gateInstallOpts, install bool) error {
	if cmd.Flags().Changed("event") && o.event != "BeforeTool" {
		return usagef("--event %q: Gemini CLI's gate is its BeforeTool hook", o.event)
	}
	if !cmd.Flags().Changed("matcher") {
		o.matcher = geminiMatcher
	}
	if install && o.timeout <= 0 {
		return usagef("--timeout %s: give a positive duration", o.timeout)
	}
	path, err := a.geminiSettingsPath(o.scope)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where this vigil is: %w", err)
	}
	// Gemini CLI's limit (milliseconds) must outlast the gate's: a hook it
	// times out gives no decision, and the call runs.
	hookTimeout := int((o.timeout + time.Minute) / time.Millisecond)
	next, err := editGeminiSettings(old, install, o.matcher, geminiHookCommand(exe, o.timeout), hookTimeout)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if bytes.Equal(next, old) || bytes.Equal(next, canonicalJSON(old)) {
		fmt.Fprintf(a.out(), "%s: nothing to change\n", path)
		return nil
	}
	if install {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
	}
	if old != nil {
		if err := os.WriteFile(path+".vigil-backup", old, 0o600); err != nil {
			return fmt.Errorf("keeping a backup: %w", err)
		}
	}
	if err := writeAtomic(path, next); err != nil {
		return err
	}
	fmt.Fprint(a.out(), udiff.Unified(path, path, string(old), string(next)))
	if old != nil {
		fmt.Fprintf(a.out(), "the file as it was: %s.vigil-backup\n", path)
	}
	return nil
}

// geminiHookGroup is one matcher group of Gemini CLI's settings.hooks.
type geminiHookGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	} `json:"hooks"`
}

// editGeminiSettings removes vigil's gate hooks from every event of a
// Gemini CLI settings file and, when add is set, adds one BeforeTool
// group; the user's other hooks, the hooks' own settings (enabled,
// disabled, notifications) and every other key stay as they were.
func editGeminiSettings(old []byte, add bool, matcher, command string, timeoutMs int) ([]byte, error) {
	top, err := parseObject(old)
	if err != nil {
		return nil, err
	}
	hooks, err := parseObject(top.vals["hooks"])
	if err != nil {
		return nil, fmt.Errorf("hooks: %v", err)
	}
	for _, ev := range append([]string(nil), hooks.keys...) {
		if geminiHookFields[ev] {
			continue
		}
		var groups []json.RawMessage
		if err := json.Unmarshal(hooks.vals[ev], &groups); err != nil {
			return nil, fmt.Errorf("hooks.%s: not a list", ev)
		}
		kept := groups[:0]
		for _, g := range groups {
			var e geminiHookGroup
			ours := json.Unmarshal(g, &e) == nil && len(e.Hooks) == 1 && isGateCommand(e.Hooks[0].Command)
			if !ours {
				kept = append(kept, g)
			}
		}
		switch {
		case len(kept) == len(groups):
		case len(kept) == 0:
			hooks.del(ev)
		default:
			b, _ := json.Marshal(kept)
			hooks.set(ev, b)
		}
	}
	if add {
		var groups []json.RawMessage
		if v, ok := hooks.vals["BeforeTool"]; ok {
			json.Unmarshal(v, &groups)
		}
		g, _ := json.Marshal(map[string]any{"matcher": matcher, "hooks": []any{map[string]any{
			"type": "command", "name": geminiHookName, "command": command, "timeout": timeoutMs}}})
		b, _ := json.Marshal(append(groups, g))
		hooks.set("BeforeTool", b)
	}
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		b, _ := hooks.MarshalJSON()
		top.set("hooks", b)
	}
	return indent(top)
}
