// Package cli is vigil's command line: the explorer (`vigil [PATH]`), the
// demo, the plain commands that read a store or decide what a run waits on
// (runs, show, tail, approve, deny, answer, revise, trace, diff), and the
// export to an OpenTelemetry backend (otel, the mapping in otelexport).
//
// Every command runs in-process through Run, which returns the exit code,
// so tests drive the whole command line without a subprocess:
//
//	0  ok
//	1  an error (a bad store, a missing run, …), one line on stderr
//	2  a usage error: an unknown command or flag, a missing argument
//	3  a decision that was not written: someone decided first, or the run
//	   cannot take it (paused, ended, no live driver), or the store is
//	   read-only
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/fang"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/internal/config"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/tui"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitError    = 1 // also diff's "the runs differ", as diff(1) has it
	ExitUsage    = 2
	ExitDecision = 3
	// tail's endings other than success (docs/cli.md): the run finished
	// without succeeding; it stopped until someone outside vigil resumes it
	// (paused, or waiting on a recovery decision); its driver is gone.
	ExitFailed  = 4
	ExitPaused  = 5
	ExitCrashed = 6
)

// exitStatus ends a command with a code and nothing more to say: what it
// had to say is already on standard output.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Version is vigil's version. Release builds set it with
// -ldflags "-X github.com/vigil-run/vigil/cli.Version=v1.2.3"; otherwise it
// comes from the build information (module version and VCS revision).
var Version = ""

// Execute runs vigil with the process's arguments and standard streams and
// returns the exit code. SIGINT and SIGTERM cancel the running command; a
// second one kills the process.
//
// A command that does not return within stopGrace of the signal — a read
// the kernel will not interrupt (a hung network file system) — is left
// behind: Execute says so in one line and returns, and the process exits.
// The explorer has put the terminal back by then (Bubble Tea stops on the
// cancelled context whatever its commands are doing).
func Execute() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runUntilStopped(ctx, stop, os.Stderr, func(ctx context.Context) int {
		return RunContext(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	})
}

// runUntilStopped runs fn, and returns its code — or, once ctx is done,
// ExitError after stopGrace if fn has not returned by then.
func runUntilStopped(ctx context.Context, stop func(), stderr io.Writer, fn func(context.Context) int) int {
	done := make(chan int, 1)
	go func() { done <- fn(ctx) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop() // a second signal gets the default behaviour
	select {
	case code := <-done:
		return code
	case <-time.After(stopGrace):
		fmt.Fprintln(stderr, "vigil: stopped by a signal while a read of the store had not finished")
		return ExitError
	}
}

// stopGrace is how long a cancelled command has to return on its own: every
// command and the explorer exit within a second of SIGTERM.
const stopGrace = 600 * time.Millisecond

// closeWithin runs close, waiting at most d for it: closing a store waits
// for a read in flight, which may never finish (the process is about to
// exit, and the kernel releases what close would have).
func closeWithin(d time.Duration, fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// closeWait bounds every close of a store at exit.
const closeWait = 300 * time.Millisecond

// Run runs one vigil command line (without the program name) and returns
// its exit code. env is the environment as os.Environ gives it.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	return RunContext(context.Background(), args, stdin, stdout, stderr, env)
}

// RunContext is Run with a context whose cancellation stops the command
// (tail and the demo exit 0 when it is cancelled).
func RunContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	return newApp(stdin, stdout, stderr, env).run(ctx, args)
}

// app is one invocation: its streams, environment and clock. Tests replace
// the clock, the time zone and the explorer.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            map[string]string
	now            func() time.Time
	loc            *time.Location
	// explore runs the explorer until the user quits it.
	explore func(ctx context.Context, a *app, opt tui.Options) error
	// demoReady, when set, is called with the demo store's path once the
	// demo is ready (tests).
	demoReady func(path string)
	// tailCheck is how often tail looks at the run's liveness when nothing
	// is written (a driver that dies writes nothing), and tailSettle how
	// long a crashed reading must hold before tail believes it.
	tailCheck, tailSettle time.Duration

	cfg    *config.Config // the user's config file, once read (config.go)
	cfgErr error

	// Whether the tmux vigil runs in passes sequences through, asked at
	// most once (notify.go).
	passOnce   sync.Once
	passAnswer func() bool

	// stderrTTY overrides whether standard error is a terminal (tests).
	stderrTTY *bool
}

// errTTY reports whether standard error is a terminal: progress notices
// are for a person watching, not for a script's log.
func (a *app) errTTY() bool {
	if a.stderrTTY != nil {
		return *a.stderrTTY
	}
	return isTerminal(a.stderr)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, env []string) *app {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, env: map[string]string{},
		now: time.Now, loc: time.Local, explore: teaExplore, tailCheck: time.Second, tailSettle: 2 * time.Second}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			a.env[k] = v
		}
	}
	return a
}

func (a *app) getenv(k string) string { return a.env[k] }

func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCmd()
	if args == nil {
		args = []string{} // nil makes cobra read os.Args
	}
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	var kept error
	keepErrors(root, &kept)
	err := fang.Execute(ctx, root,
		fang.WithVersion(version()),
		fang.WithoutManpage(),
		fang.WithErrorHandler(func(io.Writer, fang.Styles, error) {}), // printed below, as one line
	)
	if err == nil {
		err = kept
	}
	if err == nil {
		return ExitOK
	}
	var es *exitStatus
	if errors.As(err, &es) {
		return es.code
	}
	code := exitCode(err)
	var nf *notFoundError
	if errors.As(err, &nf) {
		// The one message that is several lines: where vigil looked.
		fmt.Fprint(a.errOut(), nf.report())
		return code
	}
	if ctx.Err() != nil && code == ExitError {
		// A read that failed after the signal failed because of it (a Ctrl-C
		// also reaches the ssh under a remote store): one line says so.
		fmt.Fprintln(a.errOut(), "vigil: stopped by a signal before it finished")
		return ExitError
	}
	msg := sanitize.Line(err.Error())
	var ce *configError
	if code == ExitUsage && !errors.As(err, &ce) {
		msg += usageHint(root, args)
	}
	fmt.Fprintln(a.errOut(), "vigil: "+msg)
	return code
}

// usageError is a command line vigil cannot parse.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// decisionError is a decision that was not written (exit 3).
type decisionError struct{ msg string }

func (e *decisionError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	var de *decisionError
	var ce *configError
	switch {
	case errors.As(err, &ue), errors.As(err, &ce):
		return ExitUsage
	case errors.As(err, &de):
		return ExitDecision
	case isCobraUsage(err):
		return ExitUsage
	}
	return ExitError
}

// isCobraUsage recognises the usage errors cobra and pflag make without a
// hook to wrap them.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most", "bad flag syntax",
		"if any flags in the group"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// usageHint points at the help of the command the arguments name.
func usageHint(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		c = root
	}
	return fmt.Sprintf(" (see '%s --help')", c.CommandPath())
}

// usageArgs makes an argument validator's failures usage errors.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return &usageError{noArgsWords(cmd, args, err)}
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with names for the message.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return usagef("missing %s", strings.Join(names[len(args):], " and "))
		}
		if len(args) > len(names) {
			return usagef("unexpected argument %q", args[len(names)])
		}
		return nil
	}
}

// atLeastArgs wants the named arguments; the last may be several words.
func atLeastArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return usagef("missing %s", strings.Join(names[len(args):], " and "))
		}
		return nil
	}
}

// version is Version, or the module version and VCS revision of the build.
func version() string {
	v := Version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	if !ok {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		if dirty {
			rev += ", modified"
		}
		v += " (" + rev + ")"
	}
	return v
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(term.File)
	return ok && term.IsTerminal(f.Fd())
}
