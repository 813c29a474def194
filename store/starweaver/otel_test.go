package starweaver_test

import (
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/jaegertest"
	"github.com/vigil-run/vigil/store/starweaver"
)

// TestJaeger: the Starweaver scenario (continuations, a subagent with a
// subagent of its own, approvals and deferred tools, finished, failed and
// cancelled runs), exported to a real Jaeger, is there span for span: the
// agent tree's nesting, every provider attempt with the store's token
// counts, every tool call with its name and call id; a second export sends
// nothing and --resend sends the same spans.
func TestJaeger(t *testing.T) {
	j := jaegertest.Start(t)
	sum := jaegertest.Check(t, j, starweaver.BuildV07(t, t.TempDir()), "vigil-starweaver", "test:starweaver")
	t.Logf("%+v", sum)
	if sum.MaxDepth < 1 || sum.Calls == 0 || sum.Tools == 0 || sum.Traces < 3 {
		t.Fatalf("the store is not the one the check needs: %+v", sum)
	}
}
