package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/internal/config"
	decisions "github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/tui"
)

// The user's config file (internal/config; docs/config.md): read once per
// command, its errors one line naming the key, exit 2.

func (a *app) config() (config.Config, error) {
	if a.cfg != nil {
		return *a.cfg, a.cfgErr
	}
	c := config.Default()
	path, err := config.Path(a.getenv)
	if err != nil {
		a.cfg = &c // nowhere to look: the defaults
		return c, nil
	}
	c, err = config.Load(path)
	if err != nil {
		err = &configError{err}
	}
	a.cfg, a.cfgErr = &c, err
	return c, err
}

// tuiConfig is what the config says the explorer should look and sound
// like, and which keys it answers to.
func (a *app) tuiConfig(opt *tui.Options) error {
	c, err := a.config()
	if err != nil {
		return err
	}
	n := a.notifyFor()
	switch c.Notify.Protocol {
	case "osc9":
		n.Desktop = tui.DesktopOSC9
	case "osc777":
		n.Desktop = tui.DesktopOSC777
	case "osc99":
		n.Desktop = tui.DesktopOSC99
	}
	n.NoBell, n.NoDesktop, n.NoTitle = !c.Notify.Bell, !c.Notify.Desktop, !c.Notify.Title
	opt.Notify = n
	opt.Look = tui.Look{Mode: c.Theme.Mode, Palette: c.Theme.Palette}
	if opt.Decisions == nil {
		opt.Decisions = decisions.Local(a.getenv, "the explorer")
	}
	if len(c.Keys) > 0 {
		k := keymap.Default()
		if err := k.Remap(c.Keys); err != nil {
			return &configError{fmt.Errorf("%s: %w", c.Path, err)}
		}
		opt.Look.Keys = &k
	}
	return nil
}

// configError is a config file vigil cannot use (exit 2, like a bad
// command line: the user's own input).
type configError struct{ err error }

func (e *configError) Error() string { return "config " + e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

func (a *app) configCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Where vigil's config file is",
		Long: `vigil reads $XDG_CONFIG_HOME/vigil/config.toml (~/.config/vigil/config.toml when
XDG_CONFIG_HOME is unset): notifications, theme, keys and the default store.
A missing file means the defaults. See docs/config.md for every key.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print where the config file is looked for",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := config.Path(a.getenv)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, path)
			// What is wrong with it is said on stderr, so the path alone can
			// be read by a script.
			c, err := a.config()
			if err == nil && !c.Read {
				fmt.Fprintln(a.errOut(), "(no file there: the defaults are in use)")
			}
			return err
		},
	})
	return c
}
