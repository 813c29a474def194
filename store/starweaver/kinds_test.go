package starweaver

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// A Starweaver turn is a step whatever its text says: one that begins the
// way io-harness words its retry rows ("retry 2 after …") is not folded
// away as a retry, neither when the timeline is read whole nor when it is
// folded from Changes.
func TestTurnThatReadsLikeARetryIsAStep(t *testing.T) {
	s, path := openV07(t)
	ctx := context.Background()
	before, err := s.Steps(ctx, runR3)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const text = "retry 2 after the flaky test failed again: running it alone"
	w := writerFx(t, path)
	r3 := w.resume(sessA, runR3)
	r3.stream(1, J{"kind", "model_request", "step", 2})
	r3.stream(1, response(2, runR3, at("10:15:00"), "tool_calls", usageJ(7000, 0, 6000, 90),
		textPart(text), callPart("toolu_01R3flaky", "run_shell", J{"command", "go test -run TestFlaky ./payouts/"})))

	isTurn := func(st store.Step) bool {
		return st.Number == 2 && strings.HasPrefix(st.Decision, "retry 2 after the flaky test") && st.Kind == store.StepTurn &&
			!st.Pending && len(st.Retries) == 0
	}
	steps, err := s.Steps(ctx, runR3)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(before)+1 || !isTurn(steps[len(steps)-1]) {
		t.Fatalf("Steps after the turn: %+v", steps)
	}

	ch := changes(t, s, &cur)
	var mine []store.StepRow
	for _, r := range ch.Steps {
		if r.RunID == runR3 {
			if r.Kind != store.StepTurn {
				t.Errorf("row %d (%q) is a %v", r.RowID, r.Decision, r.Kind)
			}
			mine = append(mine, r)
		}
	}
	folded := store.AppendStepRows(before, mine)
	if len(folded) != len(before)+1 || !isTurn(folded[len(folded)-1]) {
		t.Fatalf("folded from Changes: %+v", folded)
	}
}
