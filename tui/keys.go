package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/views"
)

// onKey routes a key: quitting and the help overlay first, then a pane
// that is taking typed text, then the root's own keys (panes, help, quit),
// then the focused pane; back moves up the path when the pane had no use
// for it.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.env.Keys
	// In an overlay q and esc close it (a person who opened help by
	// mistake presses q to get out of it, not out of vigil); ctrl+c quits.
	closes := key.Matches(msg, km.Quit) || key.Matches(msg, km.Back)
	if (m.help || m.summaryOn) && closes {
		m.quitAsked = false
		if m.help {
			m.help = false
		} else {
			m.closeSummary()
		}
		return nil
	}
	if m.cmd.on && !key.Matches(msg, km.ForceQuit) {
		return m.cmdlineKey(msg) // cmdline.go
	}
	if cmd, ok := m.quitKey(msg); ok {
		return cmd
	}
	if m.help {
		switch {
		case key.Matches(msg, km.Help):
			m.help = false
		default:
			m.helpBox.Key(msg)
		}
		return nil
	}
	if m.summaryOn {
		switch {
		case key.Matches(msg, km.Summary):
			m.closeSummary()
		default:
			m.summary.Key(msg)
		}
		return nil
	}
	focused := m.panes[m.focus]
	if focused.Capturing() {
		return m.act(focused.Key(msg))
	}
	switch {
	case key.Matches(msg, km.Quit):
		return m.quit()
	case key.Matches(msg, km.Help):
		m.help = true
		return nil
	case key.Matches(msg, km.Summary):
		return m.openSummary()
	case key.Matches(msg, km.Command):
		m.openCmdline()
		return nil
	case key.Matches(msg, km.NextWaiting):
		m.jumpToWaiting()
		return nil
	case key.Matches(msg, km.Zoom):
		m.toggleZoom()
		return nil
	case key.Matches(msg, km.NextPane):
		m.focusPane((m.focus + 1) % paneCount)
		return nil
	case key.Matches(msg, km.PrevPane):
		m.focusPane((m.focus + paneCount - 1) % paneCount)
		return nil
	}
	if cmd, ok := m.openKeys(msg); ok { // open.go
		return cmd
	}
	for i, b := range km.Pane {
		if key.Matches(msg, b) {
			m.focusPane(pane(i))
			return nil
		}
	}
	read := m.detail.Offset()
	in := focused.Key(msg)
	if cmd, ok := m.afterStepKey(msg, in, read); ok { // reading.go
		return cmd
	}
	if why := m.keyElsewhere(msg); in.Kind == views.NoIntent && why != "" { // misfit.go
		m.notice("%s", why)
		return nil
	}
	if in.Kind == views.NoIntent && key.Matches(msg, km.Back) {
		m.focusPane(up[m.focus])
		return nil
	}
	return m.act(in)
}

// onPaste hands a bracketed paste to the text field being typed in the
// focused pane. With none open it is dropped: pasted text is never taken
// as keys.
func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	focused := m.panes[m.focus]
	if m.help || m.summaryOn || !focused.Capturing() {
		return nil
	}
	m.quitAsked = false // like any key but a quit key, a paste goes on
	return m.act(focused.Paste(msg.Content))
}

// focusPane moves the focus. A right-hand pane becomes the one the compact
// layout shows: if it was off screen, the layout changes.
func (m *Model) focusPane(p pane) {
	if p == m.focus {
		return
	}
	m.focus = p
	if m.zoomed {
		m.relayout() // the zoom follows the focus
	}
	if p >= paneTimeline && p != m.right {
		m.right = p
		if !m.rects[p].shown() {
			m.relayout()
		}
	}
	m.panes[p].Focus()
}

// act carries out what a pane asked for.
func (m *Model) act(in views.Intent) tea.Cmd {
	switch in.Kind {
	case views.OpenRun:
		cmd := m.openRun(in.ID)
		m.focusPane(paneAgents)
		return cmd
	case views.SelectAgent:
		return m.selectAgent(in.ID)
	case views.SelectStep:
		return m.wantDetail(false)
	case views.Decide:
		return decide(m.src, m.opt.Decisions, m.asked(in.Decision))
	}
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.Close()
	return tea.Quit
}
