package cli

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Usage errors in words a person reads without knowing Go: pflag says a
// bad number with strconv's text, and cobra says an argument to a command
// that takes none is an "unknown command".

// noArgsWords rewrites cobra.NoArgs' refusal ("unknown command "extra" for
// "vigil runs"") as what it is; any other error is returned as it is.
func noArgsWords(cmd *cobra.Command, args []string, err error) error {
	if len(args) == 0 || cmd.HasSubCommands() {
		return err
	}
	if na := cobra.NoArgs(cmd, args); na == nil || na.Error() != err.Error() {
		return err
	}
	return fmt.Errorf("%s takes no arguments, got %q", cmd.Name(), args[0])
}

// pflagValue is pflag's "invalid argument" for a value its parser refused
// (its InvalidValueError, which unwraps to the parser's error).
var pflagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (.*)$`)

// flagWords rewrites pflag's refusal of a flag's value as one line saying
// what the flag wants.
func flagWords(err error) error {
	m := pflagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, flag, why := m[1], m[2], m[3]
	var ne *strconv.NumError
	wants := ""
	switch {
	case errors.As(err, &ne) && (ne.Func == "ParseInt" || ne.Func == "ParseUint"):
		wants = "a whole number"
	case errors.As(err, &ne) && ne.Func == "ParseFloat":
		wants = "a number"
	case errors.As(err, &ne) && ne.Func == "ParseBool":
		wants = "true or false"
	case strings.HasPrefix(why, "time: "):
		wants = "a duration such as 500ms or 2s"
	default:
		return err
	}
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Errorf("%s %s: out of range for %s", flag, value, wants)
	}
	return fmt.Errorf("%s wants %s, got %q", flag, wants, value)
}

// checkSpeed refuses a --speed the demo cannot keep: the pace multiplies
// every pause, so 0 or less (or not a number) has no meaning.
func checkSpeed(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("speed")
	if f == nil || !f.Changed {
		return nil
	}
	v, err := cmd.Flags().GetFloat64("speed")
	if err != nil {
		return nil // pflag has refused it already
	}
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("--speed %s: the pace must be more than 0; 1 is human-watchable", f.Value.String())
	}
	return nil
}
