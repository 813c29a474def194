package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Settle feeds a message to the model and runs every command it leads to,
// synchronously, until nothing is left: how tests, the screenshot generator
// and benchmarks drive the model without a terminal. A command that does not
// answer within wait is a timer (the clock tick, a debounce) and is dropped.
// It reports whether the model asked to quit.
func (m *Model) Settle(msg tea.Msg, wait time.Duration) bool {
	_, cmd := m.Update(msg)
	return m.RunCmd(cmd, wait)
}

// RunCmd runs one command the same way (Init's, for instance).
func (m *Model) RunCmd(cmd tea.Cmd, wait time.Duration) (quit bool) {
	if cmd == nil {
		return false
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(wait):
		return false
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			quit = m.RunCmd(c, wait) || quit
		}
	case tea.QuitMsg:
		return true
	case tickMsg:
		// the clock tick: whoever drives the model moves the clock
	default:
		return m.Settle(msg, wait)
	}
	return quit
}
