package tui

// TakesText reports whether a paste would go into a field now (a filter,
// a search, an answer): vigil serve passes a burst of plain text on as one
// paste only then, so that keys typed in a burst elsewhere stay keys.
func (m *Model) TakesText() bool {
	return !m.help && !m.summaryOn && m.panes[m.focus].Capturing()
}
