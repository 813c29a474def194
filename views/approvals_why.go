package views

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
)

// A decision key pressed on a request it does not decide says so, with the
// keys this request takes, instead of doing nothing: "e answers questions;
// this is a plan: a approve · r revise · d cancel".

// misfitKey is what the footer says about a decision key that does not fit
// the selected request ("" for a key that is no decision key, or fits).
func (p *Approvals) misfitKey(msg tea.KeyPressMsg, kind store.RequestKind) string {
	km := p.env.Keys
	var does string
	switch {
	case key.Matches(msg, km.Answer) && kind != store.Question:
		does = "answers questions"
	case key.Matches(msg, km.Revise) && kind != store.Plan:
		does = "revises plans"
	case key.Matches(msg, km.Deny) && kind == store.Question:
		does = "denies approvals and cancels plans"
	case key.Matches(msg, km.DenyReason) && kind == store.Question:
		does = "denies approvals and cancels plans, saying why"
	default:
		return ""
	}
	return msg.String() + " " + does + "; this is a " + kind.String() + ": " + p.offeredText(kind)
}

// offeredText is the keys a request of this kind takes, as plain text.
func (p *Approvals) offeredText(kind store.RequestKind) string {
	var parts []string
	for _, b := range p.offered(kind) {
		h := b.Help()
		parts = append(parts, h.Key+" "+h.Desc)
	}
	return strings.Join(parts, " · ")
}

// offered is the keys a request of this kind takes.
func (p *Approvals) offered(kind store.RequestKind) []key.Binding {
	km := p.env.Keys
	switch kind {
	case store.Approval:
		return km.ApprovalHints()
	case store.Question:
		return km.QuestionHints()
	case store.Plan:
		return km.PlanHints()
	}
	return nil
}

// strayConfirmKey closes an open y/n prompt on any key but its own: left
// open, a y typed later for something else would confirm it.
func (p *Approvals) strayConfirmKey(msg tea.KeyPressMsg) {
	p.mode = browsing
	p.say(false, "not decided: %s is not %s, so the question was closed", msg.String(), p.env.Keys.Confirm.Help().Key)
}
