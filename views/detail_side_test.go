package views

import (
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// The step pane's lines for a cut observation and hunk say how much more
// the store holds and which key opens it.
func TestStepPaneSaysSideFieldsAreCut(t *testing.T) {
	d := &store.StepDetail{Observations: []store.Observation{{RowID: 7, Kind: "exec", Text: "head of it"}},
		Edits:      []store.Edit{{RowID: 9, Tool: "edit_file", Path: "a", Hunk: "+head"}},
		Truncated:  []string{store.ObservationField(7), store.EditField(9)},
		FieldBytes: map[string]int64{store.ObservationField(7): 3 << 20, store.EditField(9): 5 << 20}}
	var parts []string
	for _, p := range StepParts(d) {
		if p.Field != "" {
			parts = append(parts, p.Field)
		}
	}
	if strings.Join(parts, ",") != "observation 7,edit 9" {
		t.Errorf("fields written whole: %v", parts)
	}
	text := StepText(d)
	if strings.Count(text, "more: the store holds") != 2 {
		t.Errorf("the cuts are not said:\n%s", text)
	}
}
