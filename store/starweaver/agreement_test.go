package starweaver_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/agreement"
	"github.com/vigil-run/vigil/store/starweaver"
)

// TestExplorerAndCLIAgree: on the Starweaver scenario (continuations, a
// subagent with a subagent of its own, approvals and deferred tools
// waiting, finished, failed and cancelled runs) the explorer's Runs and
// Agents panes and `vigil runs/show --json` report the same state and
// counts for every run.
func TestExplorerAndCLIAgree(t *testing.T) {
	sum := agreement.Check(t, starweaver.BuildV07(t, t.TempDir()))
	t.Logf("%+v", sum)
	if sum.MaxDepth < 2 || sum.Waiting == 0 || len(sum.States) < 2 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
