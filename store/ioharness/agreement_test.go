package ioharness_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/agreement"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

// TestExplorerAndCLIAgree: on an io-harness store with finished, paused
// and live runs and a live tree three deep waiting on a human, the
// explorer's Runs and Agents panes and `vigil runs/show --json` report the
// same state and counts (the agent's own and the tree's) for every run.
func TestExplorerAndCLIAgree(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sum := agreement.Check(t, path)
	t.Logf("%+v", sum)
	if sum.MaxDepth < 2 || sum.Waiting == 0 || len(sum.States) < 3 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
