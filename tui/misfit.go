package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
)

// A key the focused pane has no use for, that acts in another pane, says
// where it acts instead of doing nothing (the Approvals pane says itself
// why a decision key does not fit the request: views/approvals_why.go).

// keyElsewhere is what to say about msg in the focused pane ("" when the
// key acts nowhere else either).
func (m *Model) keyElsewhere(msg tea.KeyPressMsg) string {
	km := m.env.Keys
	in := func(p pane) string {
		return fmt.Sprintf("%s (%s)", keymap.PaneNames[p], km.Pane[p].Help().Key)
	}
	here := keymap.PaneNames[m.focus]
	k := msg.String()
	switch {
	case m.focus != paneApprovals && (key.Matches(msg, km.Approve) || key.Matches(msg, km.Deny) || key.Matches(msg, km.DenyReason) ||
		key.Matches(msg, km.Answer) || key.Matches(msg, km.Revise) || key.Matches(msg, km.Decided)):
		return fmt.Sprintf("%s decides in %s, not in %s; %s goes to the oldest waiting request", k, in(paneApprovals), here, km.NextWaiting.Help().Key)
	case m.focus != paneTimeline && m.focus != paneStep && key.Matches(msg, km.Follow):
		return fmt.Sprintf("%s follows new steps in %s and %s, not in %s", k, in(paneTimeline), in(paneStep), here)
	case m.focus != paneTimeline && key.Matches(msg, km.StepFilter):
		return fmt.Sprintf("%s picks a tool or kind of step in %s, not in %s", k, in(paneTimeline), here)
	case m.focus != paneRuns && key.Matches(msg, km.Sort):
		return fmt.Sprintf("%s sorts %s, not %s", k, in(paneRuns), here)
	}
	return ""
}
