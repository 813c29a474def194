package store

import "testing"

func TestAppendStepRowsFoldsRetries(t *testing.T) {
	rows := []StepRow{
		{RowID: 1, RunID: "1", Number: 1, Decision: "read a"},
		{RowID: 2, RunID: "1", Number: 2, Kind: StepRetry, Decision: "retry 1 after Timeout in 500ms"},
		{RowID: 3, RunID: "1", Number: 2, Kind: StepRetry, Decision: "retry 2 after Timeout in 1s"},
	}
	steps := AppendStepRows(nil, rows)
	if len(steps) != 2 || !steps[1].Pending || len(steps[1].Retries) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	steps = AppendStepRows(steps, []StepRow{{RowID: 4, RunID: "1", Number: 2, Decision: "wrote b", Tokens: 7}})
	if len(steps) != 2 || steps[1].Pending || steps[1].Decision != "wrote b" || steps[1].RowID != 4 || len(steps[1].Retries) != 2 {
		t.Fatalf("after commit = %+v", steps)
	}
}

// Folding is by the kind an adapter set, never by what a row says: a turn
// that reads like an io-harness retry row is a step of its own.
func TestAppendStepRowsIgnoresText(t *testing.T) {
	steps := AppendStepRows(nil, []StepRow{
		{RowID: 1, RunID: "r", Number: 1, Decision: "read a"},
		{RowID: 2, RunID: "r", Number: 2, Decision: "retry 2 after the flaky test failed again"},
	})
	if len(steps) != 2 || steps[1].Pending || len(steps[1].Retries) != 0 || steps[1].Kind != StepTurn {
		t.Fatalf("steps = %+v", steps)
	}
}
