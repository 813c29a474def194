package cli

import (
	"time"

	"github.com/spf13/cobra"
)

// minPoll is the shortest --poll interval taken. A read of the store takes
// milliseconds, so a shorter interval reads it without pause (--poll 1ns
// kept a core busy) and shows nothing sooner.
const minPoll = 10 * time.Millisecond

// checkPoll refuses a --poll that is negative or under minPoll, on every
// command that has the flag, before the command starts; 0 (the default)
// means file events.
func checkPoll(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("poll")
	if f == nil || !f.Changed {
		return nil
	}
	d, err := cmd.Flags().GetDuration("poll")
	switch {
	case err != nil:
		return nil // pflag has refused it already
	case d < 0:
		return usagef("--poll %s: an interval cannot be negative (0, the default, uses file events)", d)
	case d > 0 && d < minPoll:
		return usagef("--poll %s: an interval below %s would read the store without pause", d, minPoll)
	}
	return nil
}
