package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/views"
)

// Scrolling or searching the step pane pauses the timeline's following
// (views/timeline_pause.go): the detail shows the step the timeline's
// cursor is on, so the cursor stays while the step is read. f in the step
// pane follows again.

// afterStepKey looks at what a key did in the focused step pane (its
// first line was before): a move pauses following, f with no other use
// follows again. handled says the key is done with.
func (m *Model) afterStepKey(msg tea.KeyPressMsg, in views.Intent, before int) (tea.Cmd, bool) {
	if m.focus != paneStep {
		return nil, false
	}
	m.readStep(before)
	if in.Kind == views.NoIntent && key.Matches(msg, m.env.Keys.Follow) {
		return m.act(m.timeline.ResumeFollow()), true
	}
	return nil, false
}

// readStep pauses following when the step pane moved from before.
func (m *Model) readStep(before int) {
	if m.detail.Offset() != before {
		m.timeline.PauseFollow()
	}
}
