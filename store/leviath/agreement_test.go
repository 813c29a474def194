package leviath_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/agreement"
	"github.com/vigil-run/vigil/store/leviath"
)

// TestExplorerAndCLIAgree: on the Leviath fixture (a release tree with
// workers and a grandchild, a prompt waiting on the operator, finished,
// failed, crashed and damaged runs) the explorer's Runs and Agents panes
// and `vigil runs/show --json` report the same state and counts for every
// run.
func TestExplorerAndCLIAgree(t *testing.T) {
	sum := agreement.Check(t, leviath.BuildFixture(t, t.TempDir()))
	t.Logf("%+v", sum)
	if sum.MaxDepth < 2 || sum.Waiting == 0 || len(sum.States) < 2 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
