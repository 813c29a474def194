// Package agentcli drives the real agent CLIs (Claude Code, Codex, Gemini
// CLI, opencode) headless in tests: each run gets its own HOME (a test
// temporary directory) holding the CLI's config, pointed at a model server
// on 127.0.0.1, with telemetry, update checks and other traffic switched
// off, and an environment built from nothing but PATH and the CLI's own
// variables, so no key or proxy of the machine leaks in.
//
// opencode also runs as its server (Serve: `opencode serve`), which asks
// its permissions over HTTP instead of rejecting them.
//
// The CLIs come from the cache internal/agentclis installs into (`go run
// ./tools/agentclis`); a test whose CLI is missing skips with one line
// saying how to install it, and fails with CI set.
package agentcli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/agentclis"
	"github.com/vigil-run/vigil/internal/testkit"
)

// Agent is an installed CLI ready to run.
type Agent struct {
	agentclis.CLI
	path  string
	cache string
	kind  kind
	// Prepare, when set, runs after the CLI's own files are written under
	// a run's new HOME and before the CLI starts (a test installs a hook).
	Prepare func(home, work string) error
	// Args, when set, rewrites the CLI's command line (a test that needs a
	// tool the rig allows up front to be asked for instead).
	Args func(args []string) []string
}

// Need is the installed CLI called name (one of agentclis.Pinned), or
// testkit.Need's skip (failure under CI) saying how to install it.
func Need(t testing.TB, name string) *Agent {
	t.Helper()
	c, ok := agentclis.Lookup(name)
	k, known := kinds[name]
	if !ok || !known {
		t.Fatalf("agentcli: no pinned CLI %q", name)
	}
	cache, err := agentclis.CacheDir()
	if err != nil {
		testkit.Need(t, c.Spec(), err.Error())
	}
	if !c.Installed(cache) {
		testkit.Need(t, c.Spec(), "not installed at "+c.Path(cache)+": "+c.InstallHint(cache))
	}
	if _, err := exec.LookPath("node"); err != nil {
		testkit.Need(t, "node", c.Spec()+" runs under node (its launcher or all of it)")
	}
	return &Agent{CLI: c, path: c.Path(cache), cache: cache, kind: k}
}

// Result is one finished run: where it ran and what it printed.
type Result struct {
	Home    string // the run's HOME, which holds every file the CLI wrote
	Work    string // its working directory, under Home
	Stdout  []byte
	Stderr  []byte
	Err     error // the exit status, nil for 0
	Took    time.Duration
	Started time.Time
}

// Store lists the CLI's session files under the run's HOME (transcripts,
// rollouts, chat files, opencode's database), sorted.
func (r *Result) Store(a *Agent) []string {
	var out []string
	for _, g := range a.kind.store {
		m, _ := filepath.Glob(filepath.Join(r.Home, g))
		out = append(out, m...)
	}
	sort.Strings(out)
	return out
}

// Run runs the CLI headless on prompt against the model server at
// baseURL (http://127.0.0.1:PORT), in a new HOME, and waits for it (at
// most timeout). A run that exits non-zero is returned, not failed: the
// test decides.
func (a *Agent) Run(t testing.TB, baseURL, prompt string, timeout time.Duration) *Result {
	t.Helper()
	return a.Start(t, baseURL, prompt, timeout).Wait()
}

// Running is a run not yet waited for: its HOME and working directory are
// there to look at while the CLI works.
type Running struct {
	Home, Work string
	agent      *Agent
	cmd        *exec.Cmd
	cancel     context.CancelFunc
	ctx        context.Context
	stdout     bytes.Buffer
	stderr     bytes.Buffer
	start, end time.Time
	done       chan struct{}
	err        error
	t          testing.TB
}

// Start starts the CLI as Run does and returns without waiting; the test's
// end kills it if Wait was not called.
func (a *Agent) Start(t testing.TB, baseURL, prompt string, timeout time.Duration) *Running {
	t.Helper()
	return a.start(t, baseURL, prompt, timeout, nil)
}

// start starts the CLI set up for baseURL, with args in place of its
// headless run's when given.
func (a *Agent) start(t testing.TB, baseURL, prompt string, timeout time.Duration, args []string) *Running {
	t.Helper()
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	files, env, runArgs := a.kind.setup(setupIn{home: home, work: work, url: baseURL, cache: a.Prefix(a.cache), prompt: prompt})
	if args == nil {
		args = runArgs
	}
	for name, body := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if a.Prepare != nil {
		if err := a.Prepare(home, work); err != nil {
			t.Fatalf("preparing %s's HOME: %v", a.Name, err)
		}
	}
	if a.Args != nil {
		args = a.Args(args)
	}
	r := &Running{Home: home, Work: work, agent: a, done: make(chan struct{}), t: t}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(r.ctx, a.path, args...)
	cmd.Dir = work
	cmd.Env = append(baseEnv(home), env...)
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	// Its own process group: a timeout ends the CLI and whatever it
	// started (shells, sub-agents, language servers).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	r.cmd = cmd
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		r.cancel()
		t.Fatalf("starting %s: %v", a.Name, err)
	}
	go func() {
		r.err = cmd.Wait()
		r.end = time.Now()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of a finished run
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cancel()
		<-r.done
	})
	return r
}

// Exited reports whether the CLI has exited.
func (r *Running) Exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Kill kills the CLI and everything it started (its process group), as
// an interrupted agent is killed.
func (r *Running) Kill() { r.cancel() }

// Wait waits for the CLI to exit (or its timeout) and returns the run.
func (r *Running) Wait() *Result {
	<-r.done
	r.cancel()
	res := &Result{Home: r.Home, Work: r.Work, Stdout: r.stdout.Bytes(), Stderr: r.stderr.Bytes(),
		Err: r.err, Took: r.end.Sub(r.start), Started: r.start}
	if r.ctx.Err() == context.DeadlineExceeded {
		r.t.Logf("%s did not finish in time; stderr:\n%s", r.agent.Name, tail(res.Stderr))
	}
	return res
}

// Store lists the CLI's session files written so far.
func (r *Running) Store() []string { return (&Result{Home: r.Home}).Store(r.agent) }

// baseEnv is all a CLI inherits: PATH (for node and the shell its tools
// run), the new HOME with its XDG directories under it, a locale.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"USER=vigil-test",
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
