package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/remote"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

// runRemote is the explorer on ssh://[user@]host[:port]/path: the far
// side's `vigil agent --stdio` over the system ssh.
func (a *app) runRemote(ctx context.Context, o exploreOpts, url string) error {
	t, err := remote.ParseTarget(url)
	if err != nil {
		return &usageError{err}
	}
	held := &heldLines{}
	opt := remote.Options{SSH: strings.Fields(a.getenv("VIGIL_SSH")), RemoteVigil: a.getenv("VIGIL_REMOTE_VIGIL"),
		ReadOnly: o.readOnly, Log: func(l string) { fmt.Fprintf(held, "vigil: %s %s\n", time.Now().Format("15:04:05"), l) }}
	a.remoteAudit(&opt, "the explorer")
	if opt.Audit != nil {
		defer opt.Audit.Close()
	}
	c, err := a.dial(ctx, t, opt)
	if err != nil {
		return err
	}
	defer c.Close()
	src := c.Source()
	if o.run != "" {
		runs, err := src.Runs(ctx)
		if err != nil {
			return err
		}
		found := false
		for _, r := range runs {
			found = found || r.ID == o.run
		}
		if !found {
			return noSuchRun(src, o.run)
		}
	}
	topt := tui.Options{Source: src, Reopen: func() (store.Source, error) { return c.Source(), nil },
		Wakeups: c.Wakeups, Run: o.run, StoreLabel: t.String(), NoColor: a.getenv("NO_COLOR") != ""}
	if err := a.tuiConfig(&topt); err != nil {
		return err
	}
	err = a.explore(ctx, a, topt)
	held.writeTo(a.errOut())
	return err
}

// sshFrom is " from ADDR" of $SSH_CONNECTION ("client-ip client-port
// server-ip server-port"), or nothing.
func sshFrom(conn string) string {
	f := strings.Fields(conn)
	if len(f) < 2 {
		return ""
	}
	return " from " + sanitize.Line(f[0]) + " port " + sanitize.Line(f[1])
}

// remoteAudit is who a command on an ssh:// store decides as (the far
// side's log names them) and this machine's log, where what became of a
// decision the link took with it is recorded once the link is back. The
// decisions themselves are recorded by the decision service that sends
// them (decision.Local), which refuses them when the log cannot be had.
func (a *app) remoteAudit(opt *remote.Options, via string) {
	opt.Who, opt.Via = audit.LocalWho(a.getenv), via
	if opt.ReadOnly {
		return
	}
	if l, err := audit.OpenIn(a.getenv); err == nil {
		opt.Audit = l
	}
}

type agentOpts struct {
	stdio    bool
	store    string
	readOnly bool
	poll     time.Duration
}

// agentCmd is what `vigil ssh://…` runs on the far side.
func (a *app) agentCmd() *cobra.Command {
	var o agentOpts
	c := &cobra.Command{
		Use:    "agent --stdio --store PATH",
		Short:  "Serve a store to a vigil on another machine (run by vigil ssh://…)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !o.stdio {
				return usagef("agent speaks only over its standard input and output: --stdio")
			}
			if o.store == "" {
				return usagef("agent needs --store PATH")
			}
			aopt := remote.AgentOptions{Path: a.expandHome(o.store), ReadOnly: o.readOnly, Vigil: version(), Open: openSource, Poll: o.poll,
				Who: audit.LocalWho(a.getenv), Channel: "vigil agent over ssh" + sshFrom(a.getenv("SSH_CONNECTION"))}
			// The far machine's own record of what was decided through it;
			// a far side with no writable state directory decides on
			// without (the deciding side records it).
			if !o.readOnly {
				if l, err := audit.OpenIn(a.getenv); err == nil {
					defer l.Close()
					aopt.Audit = l
				}
			}
			if dir, err := audit.StateDir(a.getenv); err == nil {
				aopt.DecideLock = remote.DecideLock(dir, aopt.Path)
			}
			err := remote.Agent(cmd.Context(), a.stdin, a.stdout, aopt)
			if err != nil {
				// Said on the first line already, for the client to report.
				return &exitStatus{code: ExitError}
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&o.stdio, "stdio", false, "speak the remote protocol on standard input and output")
	f.StringVar(&o.store, "store", "", "the store to serve")
	f.BoolVar(&o.readOnly, "read-only", false, "no decision can be made through this agent")
	f.DurationVar(&o.poll, "poll", 0, "poll the store at this interval instead of using file events")
	return c
}

// dial is remote.Dial, saying so on a terminal when the far side has not
// answered within connectingAfter: before the explorer draws, a silent
// terminal would otherwise be all a user sees for up to 30 s. The notice
// is erased once the dial returns (when it fits on one line), so what
// follows (the explorer, or the one line of an error) stands alone; a
// script's standard error never gets it.
func (a *app) dial(ctx context.Context, t remote.Target, opt remote.Options) (*remote.Client, error) {
	if !a.errTTY() {
		return remote.Dial(ctx, t, opt)
	}
	dialed, said := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-dialed:
			said <- false
		case <-time.After(connectingAfter):
			said <- a.notice(fmt.Sprintf("vigil: connecting to %s: no answer yet (Ctrl-C stops)", t))
		}
	}()
	c, err := remote.Dial(ctx, t, opt)
	close(dialed)
	if <-said {
		io.WriteString(a.stderr, "\r\x1b[2K") // the notice's line, cleared
	}
	return c, err
}

// connectingAfter is how long a first connection goes unremarked.
const connectingAfter = time.Second

// notice writes line to standard error, without its newline when the
// terminal is known to be wide enough to hold it on one row (then the
// caller clears that row when the notice is done); it reports which.
func (a *app) notice(line string) (clearable bool) {
	line = sanitize.Line(line)
	if f, ok := a.stderr.(term.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && textfmt.Width(line) < w {
			io.WriteString(a.stderr, line)
			return true
		}
	}
	fmt.Fprintln(a.errOut(), line)
	return false
}
