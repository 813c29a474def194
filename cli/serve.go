package cli

import (
	"context"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/serve"
	"github.com/vigil-run/vigil/tui"
)

type serveOpts struct {
	listen, authorized, approvers, hostKey string
	stores                                 []string
	readOnly                               bool
	idle                                   time.Duration
	rate, maxConns, maxUnauth              int
	handshake                              time.Duration
	poll                                   time.Duration
}

func (a *app) serveCmd() *cobra.Command {
	var o serveOpts
	c := &cobra.Command{
		Use:   "serve --store PATH --authorized-keys FILE [--approvers FILE]",
		Short: "Serve the explorer over SSH to a team",
		Long: `serve runs an SSH server whose every session is the explorer on the stores
named: ` + "`ssh -p 2222 HOST`" + ` opens what a local user gets. Keys are OpenSSH
authorized_keys files: --authorized-keys lists viewers (they browse), --approvers
those who may also decide. A key's comment is its display name. Public keys only:
passwords, keyboard-interactive and sessions without a terminal are refused with
one line in the server's log (standard error).

Each store is tailed once, however many sessions show it. Every decision is
written to the audit log, $XDG_STATE_HOME/vigil/audit.jsonl (else
~/.local/state/vigil/audit.jsonl), with the key's name and SHA256 fingerprint,
the time and the session's address, synced to disk before it is reported won;
the store's own decided_by columns keep what its format writes.

With several stores, ` + "`ssh -t -p 2222 HOST NAME`" + ` picks one by its base name or
number (default the first). The host key is generated on first start at
$XDG_STATE_HOME/vigil/ssh_host_ed25519_key (mode 0600) unless --host-key names one.`,
		Example: `# viewers and approvers on this machine's loopback
vigil serve --store runs.sqlite3 --authorized-keys team.keys --approvers leads.keys
# everyone browses, nobody decides, reachable from the network
vigil serve --listen 0.0.0.0:2222 --store runs.sqlite3 --authorized-keys team.keys --read-only`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return a.serve(cmd.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:2222", "the address to listen on")
	f.StringVar(&o.authorized, "authorized-keys", "", "an authorized_keys file of the keys that may connect as viewers")
	f.StringVar(&o.approvers, "approvers", "", "an authorized_keys file of the keys that may also decide")
	f.StringVar(&o.hostKey, "host-key", "", "the server's private host key (default: generated under the state directory)")
	f.StringArrayVar(&o.stores, "store", nil, "a store to serve (repeat for several; default $VIGIL_STORE, else the usual places)")
	f.BoolVar(&o.readOnly, "read-only", false, "nobody decides: every session browses")
	f.DurationVar(&o.idle, "idle-timeout", 30*time.Minute, "close a session after this long without a key pressed (0: never)")
	f.IntVar(&o.rate, "rate-limit", 60, "connections one address may open a minute")
	f.IntVar(&o.maxConns, "max-connections", 256, "connections open at once")
	f.IntVar(&o.maxUnauth, "max-unauthenticated", 10, "connections one address may have open before they authenticate")
	f.DurationVar(&o.handshake, "handshake-timeout", time.Minute, "close a connection that has not authenticated after this long")
	f.DurationVar(&o.poll, "poll", 0, "poll the stores at this interval instead of using file events")
	return c
}

func (a *app) serve(ctx context.Context, o serveOpts) error {
	var stores []string
	if len(o.stores) == 0 {
		// Nothing named: the team sees what a bare vigil here shows, every
		// store found, the gate's questions among them.
		named, err := a.named(nil)
		if err != nil {
			return err
		}
		found := []string{}
		if named {
			p, err := a.resolveStore("")
			if err != nil {
				return err
			}
			found = append(found, p)
		} else if found, err = a.discover(); err != nil {
			return err
		}
		for _, p := range found {
			stores = append(stores, abs(p))
		}
	}
	for _, p := range o.stores {
		p, err := a.resolveStore(p)
		if err != nil {
			return err
		}
		stores = append(stores, abs(p))
	}
	state, err := audit.StateDir(a.getenv)
	if err != nil {
		return err
	}
	idle := o.idle
	if idle == 0 {
		idle = -1
	}
	cfg := serve.Config{Listen: o.listen, AuthorizedKeys: a.expandHome(o.authorized), Approvers: a.expandHome(o.approvers),
		HostKey: a.expandHome(o.hostKey), Stores: stores, ReadOnly: o.readOnly, StateDir: state, IdleTimeout: idle,
		RatePerMinute: o.rate, MaxConns: o.maxConns, MaxUnauthPerAddr: o.maxUnauth, HandshakeTimeout: o.handshake,
		Poll: o.poll, Open: openSource, Log: a.stderr}
	// The sessions' explorers take the server's config: its theme, keys and
	// notify switches (docs/serve.md).
	var topt tui.Options
	if err := a.tuiConfig(&topt); err != nil {
		return err
	}
	cfg.Look, cfg.Notify = topt.Look, topt.Notify
	if c, _ := a.config(); c.Notify.Protocol == "" || c.Notify.Protocol == "auto" {
		cfg.DetectDesktop = true // the client's terminal, not the server's
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, l)
}
