package views

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// glyphLegend is the runs pane's state glyphs with the word each stands
// for, as the help lists them: the glyph is all a narrow runs pane shows
// of a run's state. Built from StateGlyph so the two cannot disagree.
func glyphLegend() string {
	var parts []string
	for _, st := range []store.State{store.StateRunning, store.StateWaiting, store.StatePaused, store.StateStale,
		store.StateRecovery, store.StateCrashed, store.StateUnknown} {
		parts = append(parts, StateGlyph(st, "")+" "+st.String())
	}
	parts = append(parts, StateGlyph(store.StateFinished, store.OutcomeSuccess)+" succeeded",
		StateGlyph(store.StateFinished, store.OutcomeFailed)+" ended otherwise (failed, denied, …)")
	return "Run states: " + strings.Join(parts, " · ")
}
