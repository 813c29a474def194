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

// statusLegend says what the status bar's short words mean.
func statusLegend(approvalsKey string) string {
	return "Status bar: ◆ N waiting (" + approvalsKey + ") counts the requests waiting on a human; " + approvalsKey +
		" shows them. push: vigil hears of each write to the store as it happens; polling: it reads the store on a timer. " +
		"NOT CURRENT: what is shown is not the store as it is now, and why. The keys after the facts are the focused pane's."
}
