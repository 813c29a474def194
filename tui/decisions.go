package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/decision"
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
	case historyMsg:
		if msg.err == nil && msg.root == m.st.root {
			items := make([]views.HistoryItem, 0, len(msg.recs))
			for _, r := range msg.recs {
				items = append(items, views.HistoryItem{Rec: r, Asker: m.asker(r.RunID)})
			}
			m.approvals.SetHistory(m.agentTitle(msg.root), items)
		}
		return nil, true
	case channelMsg:
		if msg.err == nil {
			m.approvals.SetHeldChannel(msg.req.Key(), msg.channel)
		}
		return nil, true
	}
	return nil, false
}

// noteDecided gives the approval pane the store's record of every request
// a refresh says was decided, before the queue drops them, and reads the
// open tree's decisions again when one of them is in it.
func (m *Model) noteDecided(ch *store.Changes) tea.Cmd {
	if ch == nil {
		return nil
	}
	now := m.now()
	inTree := false
	for _, r := range ch.Requests {
		if r.Resolved {
			m.approvals.Resolved(views.Decided{Req: r, Channel: r.DecidedBy, Seen: now})
			inTree = inTree || m.st.inOpenTree(r.RunID)
		}
	}
	if inTree {
		return m.wantHistory()
	}
	return nil
}

// historyMsg is the open tree's decided requests.
type historyMsg struct {
	from
	root string
	recs []store.DecisionRecord
	err  error
}

// wantHistory reads the decided requests of the open run's tree.
func (m *Model) wantHistory() tea.Cmd {
	root := m.st.root
	if root == "" {
		return nil
	}
	ids := m.st.model.Subtree(root)
	src, path := m.src, m.auditPath
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		recs, err := store.Decisions(ctx, src, ids...)
		if err == nil {
			nameDeciders(path, src.Path(), recs)
		}
		return historyMsg{from: from{src.gen}, root: root, recs: recs, err: err}
	}
}

// wantChannel reads who decided the held approval, when the store can say.
func (m *Model) wantChannel() tea.Cmd {
	req, ok := m.approvals.HeldWithoutChannel()
	src := m.src.Source
	if !ok || !src.Capabilities().Has(store.CapPolicy) {
		return nil
	}
	gen := m.src.gen
	return func() tea.Msg {
		ctx, cancel := ioCtx()
		defer cancel()
		evs, err := src.PolicyEvents(ctx, req.RunID)
		return channelMsg{from: from{gen}, req: req, channel: store.ApprovalChannel(req, evs), err: err}
	}
}

// setReasons tells the approval pane whether the open store's format
// carries a reason with a deny.
func (m *Model) setReasons() {
	src := m.src.Source
	m.approvals.SetReasons(views.Reasons{Format: src.Format(), Carries: func(k store.RequestKind, v store.Verdict) bool {
		return src.CarriesReason(k, v)
	}})
}

// asked is a decision with what the explorer holds of its request: the
// request as queued, its run and the run's effective lease, for the
// decision service to classify from (no read, no round trip).
func (m *Model) asked(d store.Decision) decision.Ask {
	a := decision.Ask{Decision: d}
	for _, it := range m.queue {
		if it.Req.Key() == d.Key {
			q := it.Req
			a.Request = &q
			break
		}
	}
	if a.Request == nil {
		return a
	}
	if r, ok := m.st.model.Run(a.Request.RunID); ok {
		a.Run = &r
		if l, _ := m.st.model.Lease(r.ID); l != nil {
			c := *l // the model's own may change under the command
			a.Lease = &c
		}
	}
	return a
}
