package cli

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/vigil-run/vigil/store/gate"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/spf13/cobra"
)

// gateInstallOpts are install's and uninstall's flags.
type gateInstallOpts struct {
	scope   string
	event   string
	matcher string
	timeout time.Duration
}

func (a *app) gateInstallCmd(install bool) *cobra.Command {
	var o gateInstallOpts
	verb := map[bool]string{true: "install", false: "uninstall"}[install]
	c := &cobra.Command{
		Use:  verb + " claude|gemini|codex",
		Args: usageArgs(exactArgs("AGENT")),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			switch args[0] {
			case "gemini", "gemini-cli":
				err = a.gateInstallGemini(cmd, o, install)
			case "codex":
				err = a.gateInstallCodex(o, install)
			case "claude", "claude-code":
				err = a.gateInstall(o, install)
			default:
				return usagef("%q: vigil gate %s knows %s", args[0], verb, dialectNames())
			}
			if err != nil || !install {
				return err
			}
			return a.makeGateStore()
		},
	}
	if install {
		c.Short = "Add vigil's gate hook to an agent CLI's settings (Claude Code, Gemini CLI, Codex)"
		c.Long = `install adds 'vigil gate' as a Claude Code hook, so the tool calls it matches
wait in vigil's queue for an approve or deny. It edits the settings file of
--scope (user: ~/.claude/settings.json, or under $CLAUDE_CONFIG_DIR; project:
./.claude/settings.json), keeps the file as it was in settings.json.vigil-backup,
leaves every other hook alone, and prints the change. Running it again changes
nothing. --event PermissionRequest (the default) answers the permission prompts
Claude Code would show; PreToolUse gates every matching call, allowed or not.`
		f := c.Flags()
		f.StringVar(&o.event, "event", "PermissionRequest", "the hook event: PermissionRequest or PreToolUse")
		f.StringVar(&o.matcher, "matcher", "*", "the tools to gate (Claude Code's matcher: Bash, Edit|Write, *)")
		f.DurationVar(&o.timeout, "timeout", defaultGateTimeout, "how long each request waits for a decision")
	} else {
		c.Short = "Remove vigil's gate hook from an agent CLI's settings"
		c.Long = `uninstall removes every 'vigil gate' hook from the settings file of --scope,
keeps the file as it was in settings.json.vigil-backup, leaves the other hooks
alone and prints the change.`
	}
	c.Flags().StringVar(&o.scope, "scope", "user", "whose settings: user or project")
	return c
}

// scopedFile is an agent CLI's settings file for a scope: the user's in
// userDir (else ~/dir), the project's in ./dir.
func (a *app) scopedFile(scope, userDir, dir, file, what string) (string, error) {
	switch scope {
	case "user":
		if userDir != "" {
			return filepath.Join(userDir, file), nil
		}
		home := a.getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("cannot tell where %s is: $HOME is not set", what)
		}
		return filepath.Join(home, dir, file), nil
	case "project":
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, dir, file), nil
	}
	return "", usagef("--scope %q: give user or project", scope)
}

// claudeSettingsPath is the settings file of a scope, as Claude Code finds it.
func (a *app) claudeSettingsPath(scope string) (string, error) {
	return a.scopedFile(scope, a.getenv("CLAUDE_CONFIG_DIR"), ".claude", "settings.json", "Claude Code's settings")
}

// checkInstall refuses flags install cannot use.
func checkInstall(o gateInstallOpts, install bool, events ...string) error {
	if install && !slices.Contains(events, o.event) {
		return usagef("--event %q: give %s", o.event, strings.Join(events, " or "))
	}
	if install && o.timeout <= 0 {
		return usagef("--timeout %s: give a positive duration", o.timeout)
	}
	return nil
}

// hookTimeout is the CLI's own limit on the hook, in unit: it must outlast
// the gate's, because a hook the CLI times out lets the call go on.
func hookTimeout(gateTimeout, unit time.Duration) int {
	return int((gateTimeout + time.Minute) / unit)
}

func (a *app) gateInstall(o gateInstallOpts, install bool) error {
	if err := checkInstall(o, install, "PermissionRequest", "PreToolUse"); err != nil {
		return err
	}
	path, err := a.claudeSettingsPath(o.scope)
	if err != nil {
		return err
	}
	_, err = a.rewriteSettings(path, install, func(old []byte, exe string) ([]byte, error) {
		command := fmt.Sprintf("%s gate --agent claude --timeout %s", shellQuote(exe), o.timeout)
		return editClaudeSettings(old, install, o.event, o.matcher, command, hookTimeout(o.timeout, time.Second))
	})
	return err
}

// rewriteSettings edits the settings file at path as install and
// uninstall do: edit makes the new content from the old (nil when there is
// no file) and this vigil's path; an unchanged file is left be, else the
// old one is kept as path.vigil-backup, the new one written in its place
// and the change printed as a diff. It reports whether the file changed.
func (a *app) rewriteSettings(path string, install bool, edit func(old []byte, exe string) ([]byte, error)) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	exe, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("cannot tell where this vigil is: %w", err)
	}
	next, err := edit(old, exe)
	if err != nil {
		return false, fmt.Errorf("%s: %v", path, err)
	}
	// A JSON file vigil would only re-indent is unchanged too.
	if c := canonicalJSON(old); bytes.Equal(next, old) || c != nil && bytes.Equal(next, c) {
		fmt.Fprintf(a.out(), "%s: nothing to change\n", path)
		return false, nil
	}
	if install {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return false, err
		}
	}
	if old != nil {
		if err := os.WriteFile(path+".vigil-backup", old, 0o600); err != nil {
			return false, fmt.Errorf("keeping a backup: %w", err)
		}
	}
	if err := writeAtomic(path, next); err != nil {
		return false, err
	}
	fmt.Fprint(a.out(), udiff.Unified(path, path, string(old), string(next)))
	if old != nil {
		fmt.Fprintf(a.out(), "the file as it was: %s.vigil-backup\n", path)
	}
	return true, nil
}

// writeAtomic replaces path with b through a file beside it, keeping its mode.
func writeAtomic(path string, b []byte) error {
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// shellQuote quotes p for sh when it needs it (Claude Code runs hooks
// through sh -c).
func shellQuote(p string) string {
	if !strings.ContainsAny(p, " \t\n'\"\\$`;&|<>()*?[]#~") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// canonicalJSON is a settings file as vigil would write it unchanged (nil
// when it cannot be read as an object).
func canonicalJSON(b []byte) []byte {
	o, err := parseObject(b)
	if err != nil {
		return nil
	}
	out, _ := indent(o)
	return out
}

// makeGateStore creates the gate store when it is not there yet, so that
// an explorer started before the first question already reads it (a store
// that appears later is not added to a running explorer).
func (a *app) makeGateStore() error {
	path := gate.Path(a.getenv)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	h, err := gate.OpenHook(path)
	if err != nil {
		return fmt.Errorf("the hook is installed, but its store could not be made: %w", err)
	}
	h.Close()
	fmt.Fprintf(a.out(), "questions will wait in %s\n", path)
	return nil
}
