package views

import (
	"strings"

	"github.com/vigil-run/vigil/store"
)

// A text field closed with esc keeps what was typed for its request: the
// next answer, revision or reason opened on that request starts with it.
// esc is the key people press to look at something else, not to throw an
// answer away; a draft is dropped only when it is sent, when its request
// leaves the queue, or with the quit that says it loses it.

// keepDraft keeps the text in the open field for the selected request; it
// reports whether there was any.
func (p *Approvals) keepDraft() bool {
	text := strings.TrimSpace(p.input.Value())
	if text == "" {
		return false
	}
	if p.drafts == nil {
		p.drafts = map[store.RequestKey]string{}
	}
	p.drafts[p.selected] = text
	return true
}

// takeDraft is the draft kept for the selected request, once.
func (p *Approvals) takeDraft() string {
	d := p.drafts[p.selected]
	delete(p.drafts, p.selected)
	return d
}

// keptDraft is a draft kept for any request still listed ("" when none).
func (p *Approvals) keptDraft() string {
	for _, it := range p.items {
		if d := p.drafts[it.Req.Key()]; d != "" && it.Decided == nil {
			return d
		}
	}
	return ""
}

// HasDraft reports whether the selected request has a kept draft.
func (p *Approvals) HasDraft() bool { return p.drafts[p.selected] != "" }

// pruneDrafts forgets the drafts of requests no longer in items.
func (p *Approvals) pruneDrafts(items []ApprovalItem) {
	if len(p.drafts) == 0 {
		return
	}
	listed := make(map[store.RequestKey]bool, len(items))
	for _, it := range items {
		listed[it.Req.Key()] = true
	}
	for k := range p.drafts {
		if !listed[k] {
			delete(p.drafts, k)
		}
	}
}
