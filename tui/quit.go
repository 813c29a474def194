package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Quitting with a draft typed asks first: ctrl+c (or q where it is not a
// letter being typed) with an answer or a revision unsent says so, and a
// second one quits. Any other key goes on as it would have.

// quitKey handles the quit keys; handled is false for any other key.
func (m *Model) quitKey(msg tea.KeyPressMsg) (cmd tea.Cmd, handled bool) {
	km := m.env.Keys
	force := key.Matches(msg, km.ForceQuit)
	plainQ := key.Matches(msg, km.Quit) && !m.panes[m.focus].Capturing()
	if !force && !plainQ {
		m.quitAsked = false
		return nil, false
	}
	if m.approvals.Draft() == "" || m.quitAsked {
		return m.quit(), true
	}
	m.quitAsked = true
	return nil, true
}

// quitPrompt is what the status bar says while a quit waits to be confirmed.
func (m *Model) quitPrompt() string {
	if !m.quitAsked {
		return ""
	}
	km := m.env.Keys
	return "unsent text in Approvals: " + km.ForceQuit.Help().Key + " again quits and loses it; any other key goes on"
}
