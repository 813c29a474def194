package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Settle feeds a message to the model and runs every command it leads to,
// synchronously, until nothing is left: how tests, the screenshot generator
// and benchmarks drive the model without a terminal. It reports whether the
// model asked to quit.
//
// The model's own timers (the clock tick, the detail debounce, a retry's
// back-off) know they are driven this way: one longer than wait never
// fires, one shorter fires after its delay. Every other command — a read,
// a decision, a reopen — is waited for however long it takes (up to
// headlessMax), so a loaded machine cannot make a slow read look like a
// timer and lose it.
func (m *Model) Settle(msg tea.Msg, wait time.Duration) bool {
	m.headless = wait
	_, cmd := m.Update(msg)
	return m.RunCmd(cmd, wait)
}

// headlessMax bounds the wait for one command when driven headless: a
// command that never answers is a bug, not a timer.
const headlessMax = 2 * time.Minute

// RunCmd runs one command the same way (Init's, for instance).
func (m *Model) RunCmd(cmd tea.Cmd, wait time.Duration) (quit bool) {
	m.headless = wait
	if cmd == nil {
		return false
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(headlessMax):
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

// after is a timer: tea.Tick, or when the model is driven headless (see
// Settle) a command that fires after d if d is within the driver's wait,
// and none otherwise.
func (m *Model) after(d time.Duration, f func(time.Time) tea.Msg) tea.Cmd {
	switch w := m.headless; {
	case w == 0:
		return tea.Tick(d, f)
	case d > w:
		return nil
	default:
		return func() tea.Msg {
			time.Sleep(d)
			return f(time.Now())
		}
	}
}
