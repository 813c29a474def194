// Package agentclis names the agent CLIs vigil is tested against, pinned
// to the versions its tests know, and installs them from npm into a cache
// shared between test runs: one npm prefix per CLI and version, so a new
// pin installs beside the old one and nothing is installed twice.
package agentclis

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// CLI is one pinned agent CLI.
type CLI struct {
	Name    string // short name: the cache directory's and the tests'
	Package string // npm package
	Version string
	Bin     string // the command it installs
}

// Pinned are the CLIs the tests drive.
var Pinned = []CLI{
	{"claude-code", "@anthropic-ai/claude-code", "2.1.332", "claude"},
	{"codex", "@openai/codex", "0.171.0", "codex"},
	{"gemini-cli", "@google/gemini-cli", "0.61.0", "gemini"},
	{"opencode", "opencode-ai", "1.18.33", "opencode"},
}

// Lookup is the pinned CLI called name.
func Lookup(name string) (CLI, bool) {
	for _, c := range Pinned {
		if c.Name == name {
			return c, true
		}
	}
	return CLI{}, false
}

// CacheDir is where the CLIs are installed: $VIGIL_AGENT_CLIS, or
// vigil-agent-clis under the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("VIGIL_AGENT_CLIS"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the agent CLIs (set $VIGIL_AGENT_CLIS): %w", err)
	}
	return filepath.Join(d, "vigil-agent-clis"), nil
}

// Spec is the npm install argument, package@version.
func (c CLI) Spec() string { return c.Package + "@" + c.Version }

// Prefix is the npm prefix the CLI is installed into.
func (c CLI) Prefix(cache string) string { return filepath.Join(cache, c.Name+"@"+c.Version) }

// Path is the installed command.
func (c CLI) Path(cache string) string {
	return filepath.Join(c.Prefix(cache), "node_modules", ".bin", c.Bin)
}

// Installed reports whether the command is there and executable.
func (c CLI) Installed(cache string) bool {
	fi, err := os.Stat(c.Path(cache))
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// InstallHint is the one line that says how to install c.
func (c CLI) InstallHint(cache string) string {
	return fmt.Sprintf("install with `go run ./tools/agentclis` (or `npm install --prefix %s %s`)", c.Prefix(cache), c.Spec())
}

// Install installs c into cache with npm unless it is there: into a
// temporary prefix renamed into place once npm succeeded, so a run
// stopped half-way leaves nothing that looks installed. npm's output goes
// to log.
func (c CLI) Install(ctx context.Context, cache string, log io.Writer) error {
	if c.Installed(cache) {
		return nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(cache, c.Name+"@"+c.Version+".installing.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", c.Spec())
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install %s: %w", c.Spec(), err)
	}
	if fi, err := os.Stat(filepath.Join(tmp, "node_modules", ".bin", c.Bin)); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("npm installed %s but not its command %s", c.Spec(), c.Bin)
	}
	if err := os.Rename(tmp, c.Prefix(cache)); err != nil {
		if c.Installed(cache) { // another install finished first
			return nil
		}
		return err
	}
	return nil
}
