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

// A pending row is a step in flight shown as it stands: a later pending
// row of it updates it, and its own row (a larger id) replaces it. A
// timeline read with Steps unfolds into the same rows and folds back.
func TestAppendStepRowsPlaceholder(t *testing.T) {
	steps := AppendStepRows(nil, []StepRow{
		{RowID: 2, RunID: "r", Number: 1, Decision: "end_turn", Tokens: 5},
		{RowID: 4, RunID: "r", Number: 2, Decision: "running", ToolCall: "Bash ls", Tokens: 9, Pending: true},
	})
	if len(steps) != 2 || !steps[1].Pending || steps[1].ToolCall != "Bash ls" || steps[1].Tokens != 9 || steps[1].RowID != 4 {
		t.Fatalf("steps = %+v", steps)
	}
	if rows := StepRowsOf(steps, 0, 0); len(rows) != 2 || !rows[1].Pending || rows[1].RowID != 4 {
		t.Fatalf("unfolded = %+v", rows)
	} else if back := AppendStepRows(nil, rows); len(back) != 2 || !back[1].Pending || back[1].ToolCall != "Bash ls" {
		t.Fatalf("folded back = %+v", back)
	}
	steps = AppendStepRows(steps, []StepRow{{RowID: 5, RunID: "r", Number: 2, Decision: "running", ToolCall: "Bash ls; Read a", Tokens: 10, Pending: true}})
	if len(steps) != 2 || !steps[1].Pending || steps[1].ToolCall != "Bash ls; Read a" || steps[1].RowID != 5 {
		t.Fatalf("updated = %+v", steps)
	}
	steps = AppendStepRows(steps, []StepRow{{RowID: 7, RunID: "r", Number: 2, Decision: "tool_use", ToolCall: "Bash ls", ResultHead: "a.txt", Tokens: 12}})
	if len(steps) != 2 || steps[1].Pending || steps[1].RowID != 7 || steps[1].ResultHead != "a.txt" || steps[1].Tokens != 12 || len(steps[1].Retries) != 0 {
		t.Fatalf("after commit = %+v", steps)
	}
}

// A result's head is its first line that is not blank, cut on a
// character's boundary, never inside one.
func TestHeadLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"\n  \n  ok done \nmore", 80, "ok done"},
		{"", 10, ""},
		{"héllo", 2, "h…"},
		{"héllo", 3, "hé…"},
		{"abc", 3, "abc"},
	} {
		if got := HeadLine(c.in, c.n); got != c.want {
			t.Errorf("HeadLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
