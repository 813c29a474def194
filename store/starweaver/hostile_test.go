package starweaver_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/hostile"
	"github.com/vigil-run/vigil/store/starweaver"
)

// TestHostileStrings: a Starweaver database with a hostile string (the
// corpus: escape sequences of every kind, C1 and bidi controls, a carriage
// return over a row, invalid UTF-8, width-ambiguous text) in every text a
// run, its stream, its approvals and deferred tools and its display
// messages carry reaches no terminal as anything but text, in the explorer
// or on the command line.
func TestHostileStrings(t *testing.T) {
	path := starweaver.BuildHostile(t, t.TempDir(), hostile.Corpus())
	frames, outputs := hostile.Check(t, path, hostile.Options{})
	t.Logf("%d frames, %d command outputs", frames, outputs)
}
