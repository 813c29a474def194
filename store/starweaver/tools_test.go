package starweaver

import (
	"context"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// TestStepTools: a model turn's detail lists its tool calls, each with the
// name, call id and arguments the response recorded; a tool's return row
// lists none (it records a return, not a call).
func TestStepTools(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var calls, returns int
	for _, r := range runs {
		steps, err := s.Steps(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if st.Pending {
				continue
			}
			d, err := s.StepDetail(ctx, r.ID, st.RowID)
			if err != nil {
				t.Fatal(err)
			}
			if st.ToolCall == "" {
				if len(d.Tools) != 0 {
					t.Errorf("run %s row %d (%q) has no call, yet Tools %+v", r.ID, st.RowID, st.Decision, d.Tools)
				}
				returns++
				continue
			}
			if len(d.Tools) == 0 {
				t.Errorf("run %s row %d calls %q, but Tools is empty", r.ID, st.RowID, st.ToolCall)
			}
			for _, tc := range d.Tools {
				calls++
				if tc.Name == "" || tc.ID == "" {
					t.Errorf("run %s row %d: tool call %+v lacks its name or id", r.ID, st.RowID, tc)
				}
				if tc.Arguments != "" && tc.Arguments[0] != '{' {
					t.Errorf("tool call %s: arguments %q are not the recorded JSON", tc.Name, tc.Arguments)
				}
			}
		}
	}
	if calls == 0 || returns == 0 {
		t.Fatalf("%d calls and %d rows without: not the scenario this test needs", calls, returns)
	}
	_ = store.ToolCall{}
}
