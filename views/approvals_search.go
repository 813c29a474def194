package views

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// The queue searches its requests as every list does (search.go): what a
// request asks (its act and target, its question, its plan's steps) and
// who asks it.

// requestText is a request's text as the search reads it.
func (p *Approvals) requestText(i int) string {
	it := p.items[i]
	r := it.Req
	text := r.Kind.String() + " " + r.ID + " " + r.Act + " " + r.Target + " " + r.Question + " " + it.Asker
	for _, s := range r.PlanSteps {
		text += " " + s.Intent
	}
	return sanitize.Line(text)
}

// searchKey runs the search's keys while browsing; ok is false for a key
// that is not the search's.
func (p *Approvals) searchKey(msg tea.KeyPressMsg) (Intent, bool) {
	dir := 0
	switch p.search.Key(msg, p.env) {
	case searchIgnored:
		return Intent{}, false
	case searchKept:
		return redraw, true
	case searchMoved:
		dir = p.search.Dir(msg, p.env)
	}
	return p.toMatch(dir), true
}

// toMatch moves to the match dir away (0: the first from the cursor).
func (p *Approvals) toMatch(dir int) Intent {
	p.search.Index(len(p.items), p.requestText)
	if i, ok := p.search.Target(p.list.Cursor, dir); ok {
		p.list.Select(i)
		p.remember(p.env.Now())
	}
	return redraw
}
