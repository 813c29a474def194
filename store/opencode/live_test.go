package opencode_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// fold is what the explorer does with a refresh (tui/agent.go newRows and
// fold): it takes the run's rows above the largest id it has seen, in
// order, and folds them onto its timeline.
func fold(steps []store.Step, seen int64, run string, rows []store.StepRow) ([]store.Step, int64) {
	var mine []store.StepRow
	for _, r := range rows {
		if r.RunID == run && r.RowID > seen {
			mine, seen = append(mine, r), r.RowID
		}
	}
	return store.AppendStepRows(steps, mine), seen
}

func maxRow(steps []store.Step) int64 {
	var m int64
	for _, s := range steps {
		m = max(m, s.RowID)
	}
	return m
}

// stillRunning names the steps a finished turn must not leave behind.
func stillRunning(steps []store.Step) string {
	var out []string
	for _, s := range steps {
		if s.Pending || strings.HasPrefix(s.Decision, "running") || strings.HasPrefix(s.Decision, "pending") {
			out = append(out, fmt.Sprintf("%d:%s(pending %t)", s.Number, s.Decision, s.Pending))
		}
	}
	return strings.Join(out, ", ")
}

// TestLiveTurnFoldsToCommitted: a turn in flight when the explorer loads
// its timeline (or that a tail sees start) is one pending step showing its
// running call; when opencode finishes it, its committed rows come through
// Changes with larger ids and replace it, and nothing is left running.
func TestLiveTurnFoldsToCommitted(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := src.Steps(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	// A tail from before the turn: the in-flight turn arrives as a pending
	// row.
	foreign(t, db, fmt.Sprintf(userMsg+openTurn, rootID)+running, "exec")
	ch, c1, err := src.Changes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	tail, tailSeen := fold(committed, maxRow(committed), rootID, ch.Steps)
	if n := len(tail); n != len(committed)+1 || !tail[n-1].Pending || tail[n-1].Number != 3 || tail[n-1].Decision != "running bash" {
		t.Fatalf("a tail seeing the turn start: %+v", tail[len(committed):])
	}
	// The explorer loading now: one pending step, its call running.
	steps, err := src.Steps(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	n := len(steps)
	if n != len(committed)+1 || !steps[n-1].Pending || steps[n-1].Number != 3 || steps[n-1].Decision != "running bash" ||
		!strings.HasPrefix(steps[n-1].ToolCall, "bash ") {
		t.Fatalf("the live timeline: %+v", steps[len(committed):])
	}
	pending := steps[n-1].RowID
	if d, err := src.StepDetail(ctx, rootID, pending); err != nil || !strings.Contains(d.ToolCallFull, "echo ok") || !d.Pending {
		t.Fatalf("the pending row's detail: %+v %v", d, err)
	}
	seen := maxRow(steps)
	foreign(t, db, fmt.Sprintf(finishTurn, rootID), "exec")
	check := func(who string, steps []store.Step) {
		t.Helper()
		if s := stillRunning(steps); s != "" {
			t.Errorf("%s: still running after the turn finished: %s", who, s)
		}
		var three []string
		for _, s := range steps {
			if s.Number == 3 {
				three = append(three, fmt.Sprintf("%s/%s/%d", s.Decision, s.ResultHead, s.Tokens))
			}
		}
		if got := strings.Join(three, "|"); got != "calls bash//552|result bash/ok/0" {
			t.Errorf("%s: the finished turn reads %q", who, got)
		}
		for _, s := range steps[len(committed):] {
			if s.RowID <= pending {
				t.Errorf("%s: committed row %d is not above the pending row %d", who, s.RowID, pending)
			}
			if d, err := src.StepDetail(ctx, rootID, s.RowID); err != nil || d.Pending {
				t.Errorf("%s: detail of row %d: %+v %v", who, s.RowID, d, err)
			}
		}
	}
	for _, c := range []struct {
		who   string
		cur   store.Cursor
		steps []store.Step
		seen  int64
	}{{"explorer", head, steps, seen}, {"tail", c1, tail, tailSeen}} {
		ch, _, err := src.Changes(ctx, c.cur)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := fold(c.steps, c.seen, rootID, ch.Steps)
		check(c.who, got)
	}
	// The pending row's id still names the turn, now finished.
	if d, err := src.StepDetail(ctx, rootID, pending); err != nil || d.Pending || !strings.Contains(d.Result, "ok") {
		t.Errorf("the pending id after the turn: %+v %v", d, err)
	}
}
