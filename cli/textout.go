package cli

import (
	"io"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// Every command that prints text for people (runs, show, show --markdown,
// tail, diff, the decision commands, errors and warnings) writes through
// textOut. The strings from the store in it are made safe where they are
// formatted (clean, sanitize.Text); textOut is the one place all of that
// text passes on its way out, so a string that missed them still cannot
// act on a terminal (sanitize.Plain). JSON has its own escaping
// (writeJSON), trace --raw is the exact bytes asked for, and the explorer
// talks to the terminal itself.

// textOut is w for text: each write is passed through sanitize.Plain.
type textOut struct{ w io.Writer }

func (t textOut) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, sanitize.Plain(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// out is standard output for text; errOut standard error.
func (a *app) out() io.Writer    { return textOut{a.stdout} }
func (a *app) errOut() io.Writer { return textOut{a.stderr} }
