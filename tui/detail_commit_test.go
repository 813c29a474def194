package tui

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store/ioharness"
)

// A commit that moves the step the timeline follows shows that step's
// detail in the same refresh, without the pause a held-down key waits
// (vigil serve draws a session's frame 10 ms after a commit: a detail read
// 40 ms later was a second frame). Commits closer together than the pause
// still wait for it, as keys held down do.
func TestACommitShowsItsStepsDetailAtOnce(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3")
	d.contains("4 Step 4 ")
	w := d.writer()
	commit := func(step int, decision, result string) {
		t.Helper()
		if err := w.CheckpointStep(context.Background(), "4", ioharness.StepRecord{Step: step, Decision: decision, Result: result, Tokens: 10}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(detailDelay)        // the detail read when the timeline opened is long past
	d.wait = 10 * time.Millisecond // timers any longer never fire: only what comes at once
	commit(5, "decision-five", "result-of-step-five")
	read := time.Now() // the detail read starts no sooner
	d.refresh()
	d.contains("4 Step 5 ", "decision-five", "result-of-step-five")
	commit(6, "decision-six", "result-of-step-six")
	d.refresh()
	d.contains("decision-six")          // the timeline's new row
	if time.Since(read) < detailDelay { // a starved machine may have taken longer: then it is read at once too
		d.lacks("result-of-step-six") // within the pause after the read before: after it
	}
}
