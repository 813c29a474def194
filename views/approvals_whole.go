package views

import (
	"time"

	"github.com/vigil-run/vigil/store"
)

// OpensWhole reports whether enter opens the selected request whole in the
// pager: on an approval or a plan, where enter decides nothing (on a
// question it opens the answer field), and while no prompt is open.
func (p *Approvals) OpensWhole() bool {
	if p.mode != browsing || p.hist.on || p.search.Typing() {
		return false
	}
	it, ok := p.current()
	return ok && it.Req.Kind != store.Question
}

// QuietUntil is when the misfire guard lets decision keys act again.
func (p *Approvals) QuietUntil() time.Time { return p.guard.Until() }
