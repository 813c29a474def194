package views

import (
	"fmt"

	"github.com/vigil-run/vigil/store"
)

// Denying with a reason. Where the store's format carries a reason to the
// agent (Starweaver's approval record keeps one), the reason is typed and
// sent with the deny. Where it does not (io-harness keeps none: its
// pending_approvals row holds the verdict alone, and a plan's cancel has
// no text), the pane says so instead of taking text that would reach
// nobody.

// Reasons says which decisions carry a reason in the open store's format.
type Reasons struct {
	Format  string // the format's name, for what the pane says
	Carries func(kind store.RequestKind, v store.Verdict) bool
}

// SetReasons tells the pane what the open store's format carries.
func (p *Approvals) SetReasons(r Reasons) {
	p.bump()
	p.reasons = r
}

func (p *Approvals) carries(kind store.RequestKind, v store.Verdict) bool {
	return p.reasons.Carries != nil && p.reasons.Carries(kind, v)
}

// askReason opens the reason field, or says why there is none.
func (p *Approvals) askReason(it ApprovalItem, v store.Verdict) Intent {
	km := p.env.Keys
	if !p.carries(it.Req.Kind, v) {
		format := p.reasons.Format
		if format == "" {
			format = "this store"
		}
		alt := fmt.Sprintf("%s denies without one", km.Deny.Help().Key)
		if it.Req.Kind == store.Plan {
			alt = fmt.Sprintf("%s cancels; %s revises with text", km.Deny.Help().Key, km.Revise.Help().Key)
		}
		p.say(false, "no reason reaches the agent in %s: %s", format, alt)
		return redraw
	}
	p.mode, p.verdict = reasoning, v
	p.input.SetValue(p.takeKept())
	p.input.Placeholder = fmt.Sprintf("why — sent to the agent with the %s", v)
	p.input.Focus()
	p.status = ""
	return redraw
}
