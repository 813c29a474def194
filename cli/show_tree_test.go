package cli

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// TestTreeLinesDeepChain: a chain of sub-agents far deeper than a screen
// lists every agent, each guide a few cells wide (the drawing of a
// 100 000-deep chain once took gigabytes).
func TestTreeLinesDeepChain(t *testing.T) {
	const n = 2000
	runs := make([]store.Run, n)
	for i := range runs {
		runs[i] = store.Run{ID: strconv.Itoa(i + 1), StatsKnown: true}
		if i > 0 {
			runs[i].ParentID = strconv.Itoa(i)
		}
	}
	md := runmodel.New(false)
	md.SetRuns(runs)
	sh := &shown{rd: &reading{md: md}, id: "1", tree: md.Subtree("1")}
	lines := sh.treeLines()
	if len(lines) != n {
		t.Fatalf("%d lines for %d agents", len(lines), n)
	}
	for i, l := range lines {
		if l[0] != strconv.Itoa(i+1) {
			t.Fatalf("line %d is agent %s", i, l[0])
		}
		if w := utf8.RuneCountInString(l[1]); w > 3*guideLevels+4 {
			t.Fatalf("agent %s's guide is %d cells", l[0], w)
		}
	}
	if last := lines[n-1][1]; !strings.HasPrefix(last, "⋯") || !strings.HasSuffix(last, "└─ ") {
		t.Fatalf("the deepest guide %q does not say levels were left out", last)
	}
	if lines[3][1] != "      └─ " {
		t.Fatalf("a shallow guide is drawn in full: %q", lines[3][1])
	}
}
