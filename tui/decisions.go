package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// Decisions made by others reach the approval pane here: what a refresh
// says was decided, and for an approval (whose row records no decider) who
// decided it, from the policy event the run writes when it reads the row.

// channelMsg is who decided a held approval, read from its run's policy events.
type channelMsg struct {
	from
	req     store.Request
	channel string
	err     error
}

// onDecisionMsg handles this file's messages; ok is false for any other.
func (m *Model) onDecisionMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case channelMsg:
		if msg.err == nil {
			m.approvals.SetHeldChannel(msg.req.Key(), msg.channel)
		}
		return nil, true
	}
	return nil, false
}

// noteDecided gives the approval pane the store's record of every request
// a refresh says was decided, before the queue drops them.
func (m *Model) noteDecided(ch *store.Changes) {
	if ch == nil {
		return
	}
	now := m.now()
	for _, r := range ch.Requests {
		if r.Resolved {
			m.approvals.Resolved(views.Decided{Req: r, Channel: r.DecidedBy, Seen: now})
		}
	}
}

// wantChannel reads who decided the held approval, when the store can say.
func (m *Model) wantChannel() tea.Cmd {
	req, ok := m.approvals.HeldWithoutChannel()
	pr, can := m.src.Source.(store.PolicyReader)
	if !ok || !can {
		return nil
	}
	gen := m.src.gen
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		evs, err := pr.PolicyEvents(ctx, req.RunID)
		return channelMsg{from: from{gen}, req: req, channel: store.ApprovalChannel(req, evs), err: err}
	}
}
