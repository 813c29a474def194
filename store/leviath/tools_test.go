package leviath

import (
	"context"
	"testing"
)

// TestStepTools: an assistant turn's detail lists its tool calls with the
// journal's names, call ids and arguments; a tool result lists none.
func TestStepTools(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	s, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var calls, others int
	for _, r := range runs {
		steps, err := s.Steps(ctx, r.ID)
		if err != nil {
			continue // the damaged runs say so elsewhere
		}
		for _, st := range steps {
			d, err := s.StepDetail(ctx, r.ID, st.RowID)
			if err != nil {
				t.Fatal(err)
			}
			if st.ToolCall == "" {
				if len(d.Tools) != 0 {
					t.Errorf("run %s row %d (%q): Tools %+v on a row that calls nothing", r.ID, st.RowID, st.Decision, d.Tools)
				}
				others++
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
			}
		}
	}
	if calls == 0 || others == 0 {
		t.Fatalf("%d calls and %d other rows: not the fixture this test needs", calls, others)
	}
}
