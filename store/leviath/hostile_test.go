package leviath_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/hostile"
	"github.com/vigil-run/vigil/store/leviath"
)

// TestHostileStrings: a Leviath runs directory with a hostile string (the
// corpus) in every text a run's meta, journal and interaction sidecar
// carry reaches no terminal as anything but text, in the explorer or on
// the command line.
func TestHostileStrings(t *testing.T) {
	path := leviath.BuildHostile(t, t.TempDir(), hostile.Corpus())
	frames, outputs := hostile.Check(t, path, hostile.Options{})
	t.Logf("%d frames, %d command outputs", frames, outputs)
}
