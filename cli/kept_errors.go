package cli

import "github.com/spf13/cobra"

// keepErrors makes every error a command line ends in land in *kept
// instead of reaching fang, which run prints itself. fang styles an error
// it is handed by first asking the terminal for its background colour,
// twice: a terminal that does not answer (the Linux console, script(1),
// many serial and web terminals) then holds every failing command for
// 4 s, and one that answers late types the answer at the shell's prompt.
func keepErrors(root *cobra.Command, kept *error) {
	keep := func(err error) error {
		if err != nil && *kept == nil {
			*kept = err
		}
		return nil
	}
	flagErr := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return keep(flagErr(c, err)) })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error { return keep(args(c, a)) }
		}
		if pre := c.PersistentPreRunE; pre != nil {
			c.PersistentPreRunE = func(c *cobra.Command, a []string) error { return keep(pre(c, a)) }
		}
		if run := c.RunE; run != nil {
			c.RunE = func(c *cobra.Command, a []string) error {
				if *kept != nil { // the arguments or flags were refused
					return nil
				}
				return keep(run(c, a))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
