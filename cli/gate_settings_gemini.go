package cli

import (
	"fmt"
	"path/filepath"
	"time"

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
	user := ""
	if home := a.getenv("GEMINI_CLI_HOME"); home != "" {
		user = filepath.Join(home, ".gemini")
	}
	return a.scopedFile(scope, user, ".gemini", "settings.json", "Gemini CLI's settings")
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
	if !cmd.Flags().Changed("event") {
		o.event = "BeforeTool"
	}
	if o.event != "BeforeTool" {
		return usagef("--event %q: Gemini CLI's gate is its BeforeTool hook", o.event)
	}
	if !cmd.Flags().Changed("matcher") {
		o.matcher = geminiMatcher
	}
	if err := checkInstall(o, install, "BeforeTool"); err != nil {
		return err
	}
	path, err := a.geminiSettingsPath(o.scope)
	if err != nil {
		return err
	}
	_, err = a.rewriteSettings(path, install, func(old []byte, exe string) ([]byte, error) {
		// Gemini CLI's limit is in milliseconds.
		return editGeminiSettings(old, install, o.matcher, geminiHookCommand(exe, o.timeout), hookTimeout(o.timeout, time.Millisecond))
	})
	return err
}

// editGeminiSettings removes vigil's gate hooks from every event of a
// Gemini CLI settings file and, when add is set, adds one BeforeTool
// group; the user's other hooks, the hooks' own settings (enabled,
// disabled, notifications) and every other key stay as they were.
func editGeminiSettings(old []byte, add bool, matcher, command string, timeoutMs int) ([]byte, error) {
	return editHookGroups(old, geminiHookFields, func(hooks *object) {
		if add {
			appendGroup(hooks, "BeforeTool", map[string]any{"matcher": matcher, "hooks": []any{map[string]any{
				"type": "command", "name": geminiHookName, "command": command, "timeout": timeoutMs}}})
		}
	})
}
