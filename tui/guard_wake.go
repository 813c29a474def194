package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// The misfire guard's "keys paused a moment…" is drawn from the clock: with
// no message when the pause ends, the hint would stay until the next tick.
// A timer at the pause's end brings the frame that shows the keys again.

// guardEndMsg: the misfire guard's pause ends about now.
type guardEndMsg struct{}

// guardWake is a timer for the end of the guard's pause, unless one is
// set for it already or no pause is on.
func (m *Model) guardWake() tea.Cmd {
	until, now := m.approvals.QuietUntil(), m.now()
	if !until.After(now) || until.Equal(m.guardWakeAt) {
		return nil
	}
	m.guardWakeAt = until
	return m.after(until.Sub(now), func(time.Time) tea.Msg { return guardEndMsg{} })
}
