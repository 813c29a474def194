package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The agents pane keeps its laid-out lines while the forest's shape holds
// and draws each agent as the model has it now: an agent that finishes
// reads finished on the next refresh, one that joins gets its line.
func TestAgentsPaneFollowsStatesAndNewAgents(t *testing.T) {
	ctx := context.Background()
	path, w := createdStore(t, "runs.sqlite3")
	root := must(t)(w.StartRun(ctx, "the root agent", "/w"))
	if _, err := w.AcquireLease(ctx, root, harness.DefaultLeaseTTL); err != nil {
		t.Fatal(err)
	}
	kid := must(t)(w.StartChildRun(ctx, "the first helper", "/w", root, 1))
	d := openDriver(t, path, 120, 32)
	agents := func() string { return ansi.Strip(d.m.RenderPane(int(paneAgents), 100, 12)) }
	line := func(goal string) string {
		for _, l := range strings.Split(agents(), "\n") {
			if strings.Contains(l, goal) {
				return l
			}
		}
		t.Fatalf("no line for %q in the agents pane:\n%s", goal, agents())
		return ""
	}
	before := line("the first helper")
	if !strings.Contains(before, "running") {
		t.Fatalf("the helper does not read running: %q", before)
	}
	if err := w.FinishRun(ctx, kid, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	if after := line("the first helper"); after == before || strings.Contains(after, "running") {
		t.Fatalf("after it finished the helper reads %q (was %q)", after, before)
	}
	must(t)(w.StartChildRun(ctx, "the second helper", "/w", root, 1))
	d.refresh()
	line("the second helper")
	if n := strings.Count(agents(), "helper"); n != 2 {
		t.Fatalf("%d helpers in the agents pane, want 2:\n%s", n, agents())
	}
}

func must(t *testing.T) func(string, error) string {
	return func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}
