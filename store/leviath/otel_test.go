package leviath_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/jaegertest"
	"github.com/vigil-run/vigil/store/leviath"
)

// TestJaeger: the Leviath fixture (a release tree with workers and a
// grandchild, a prompt waiting on the operator, finished, failed, crashed
// and damaged runs), exported to a real Jaeger, is there span for span:
// the agent tree's nesting, every provider attempt with the store's token
// counts, every tool call with its name and call id; a second export sends
// nothing and --resend sends the same spans.
func TestJaeger(t *testing.T) {
	j := jaegertest.Start(t)
	sum := jaegertest.Check(t, j, leviath.BuildFixture(t, t.TempDir()), "vigil-leviath", "test:leviath")
	t.Logf("%+v", sum)
	if sum.Calls == 0 || sum.Tools == 0 || sum.Agents < 2 || sum.Traces < 2 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
