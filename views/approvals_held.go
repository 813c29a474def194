package views

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// Decided is what the store says about a request that no longer waits.
type Decided struct {
	Req store.Request // resolved: Decision, DecidedBy, DecidedAt, Reason, Correction
	// Channel is who or what decided, as the store records it (io-harness's
	// answered_by / decided_by, the source of an approval's policy event,
	// Starweaver's decided_by); "" when it records none.
	Channel string
	Seen    time.Time // when vigil saw it decided
}

// held is the request under the cursor when someone else decided it. It
// stays in place, with what was decided, until the person moves on: a
// request never vanishes from under a draft or a confirmation, and the
// cursor never jumps to another one.
type held struct {
	item    ApprovalItem // as it was when it waited
	index   int          // where it was in the list
	known   bool         // the store's record of the decision has arrived
	dec     Decided
	seen    time.Time
	was     queueMode     // what the person was doing: browsing, confirming, answering, revising
	verdict store.Verdict // the verdict they were confirming
	draft   string        // what they had typed, kept to copy back
}

// Resolved tells the pane the store now says a request was decided. The
// request the cursor is on learns what was decided; the others are kept
// for the next SetItems (which drops them from the list) to read.
func (p *Approvals) Resolved(d Decided) {
	p.bump()
	k := d.Req.Key()
	if p.held != nil && p.held.item.Req.Key() == k {
		if d.Channel == "" && p.held.known {
			d.Channel = p.held.dec.Channel // a later read without a channel does not erase one
		}
		p.held.dec, p.held.known = d, true
		p.laidHead = nil // the notice changed: lay it out again
		p.layout()
		return
	}
	if p.recent == nil {
		p.recent = map[store.RequestKey]Decided{}
	}
	p.recent[k] = d
}

// HeldWithoutChannel is the approval held under the cursor whose decider
// is not known yet (its run records that when it reads the row).
func (p *Approvals) HeldWithoutChannel() (store.Request, bool) {
	if p.held == nil || p.held.item.Req.Kind != store.Approval || (p.held.known && p.held.dec.Channel != "") {
		return store.Request{}, false
	}
	return p.held.item.Req, true
}

// Draft is the text typed into an answer or a revision not sent yet,
// including one kept with a request decided elsewhere.
func (p *Approvals) Draft() string {
	if p.mode == answering || p.mode == revising || p.mode == reasoning {
		if d := strings.TrimSpace(p.input.Value()); d != "" {
			return d
		}
	}
	if p.held != nil && p.held.draft != "" {
		return p.held.draft
	}
	return p.keptDraft() // approvals_drafts.go
}

// decidedRecently reports whether the store said k was decided since the
// last SetItems.
func (p *Approvals) decidedRecently(k store.RequestKey) bool {
	_, ok := p.recent[k]
	return ok
}

// hold keeps the selected request, which has just left the queue, in place.
func (p *Approvals) hold(now time.Time) {
	idx := -1
	for i, it := range p.items {
		if it.Req.Key() == p.selected {
			idx = i
		}
	}
	if idx < 0 {
		return
	}
	if p.held != nil && p.held.item.Req.Key() == p.selected {
		return // already held: it keeps what it says
	}
	h := &held{item: p.items[idx], index: idx, seen: now, was: p.mode, verdict: p.verdict}
	if p.mode == answering || p.mode == revising || p.mode == reasoning {
		h.draft = strings.TrimSpace(p.input.Value())
	}
	if h.draft == "" {
		h.draft = p.drafts[p.selected] // put aside with esc
	}
	if d, ok := p.recent[p.selected]; ok {
		h.dec, h.known = d, true
	}
	p.held = h
	p.laidHead = nil // lay it out again, with the notice
	p.mode = browsing
	p.input.Blur()
	p.status = ""
}

// withHeld puts the held request back into a list at its old place.
func (p *Approvals) withHeld(items []ApprovalItem) []ApprovalItem {
	if p.held == nil {
		return items
	}
	it := p.held.item
	it.Decided = &p.held.dec
	i := min(p.held.index, len(items))
	out := make([]ApprovalItem, 0, len(items)+1)
	out = append(out, items[:i]...)
	out = append(out, it)
	return append(out, items[i:]...)
}

// release lets the held request go once the cursor has left it. Its draft,
// if any, stays in the status line.
func (p *Approvals) release() {
	if p.held == nil || p.selected == p.held.item.Req.Key() {
		return
	}
	draft, k := p.held.draft, p.held.item.Req.Key()
	p.held = nil
	for i, it := range p.items {
		if it.Req.Key() == k {
			p.items = append(p.items[:i:i], p.items[i+1:]...)
			if p.list.Cursor > i {
				p.list.Cursor--
			}
			break
		}
	}
	p.list.SetLen(len(p.items))
	if draft != "" {
		p.kept = draft
		p.say(true, "your unsent text for %s: %s (the next answer or revision starts with it)", k, draft)
	}
}

// takeKept is the text kept from a request decided elsewhere, once: the
// next text field opens with it, for the person to send, edit or discard.
func (p *Approvals) takeKept() string {
	if d := p.takeDraft(); d != "" {
		return d // this request's own draft, put aside with esc
	}
	k := p.kept
	p.kept = ""
	return k
}

// heldNotice lays out what the pane says about a request decided
// elsewhere: what was decided, when, by whom, and what of the person's
// own was not sent.
func (p *Approvals) heldNotice(w int) []styledLine {
	h := p.held
	if h == nil {
		return nil
	}
	var out []styledLine
	what := "no longer listed as waiting (the store was read again)"
	if h.known {
		what = "decided elsewhere: " + DecisionWords(h.dec.Req)
	}
	out = append(out, one(roleBad, textfmt.Cut("✗ "+sanitize.Line(what), w)))
	out = append(out, one(roleMuted, textfmt.Cut(decisionSource(h.dec, h.known, h.seen), w)))
	switch h.was {
	case confirming:
		out = append(out, one(roleWarning, textfmt.Cut(fmt.Sprintf("your %s was not sent", h.verdict), w)))
	case answering, revising, reasoning:
		if h.draft != "" {
			// Wrapped, not cut: it is the person's own text to copy back.
			lines := wrap("not sent — your text, kept: "+sanitize.Line(h.draft), w)
			if len(lines) > maxDraftLines {
				lines = append(lines[:maxDraftLines-1], textfmt.Cut(strings.Join(lines[maxDraftLines-1:], " "), w))
			}
			for _, l := range lines {
				out = append(out, one(roleWarning, l))
			}
		}
	}
	km := p.env.Keys
	out = append(out, one(roleFaint, textfmt.Cut(fmt.Sprintf("%s/%s moves on; this request then leaves the list", km.Up.Help().Key, km.Down.Help().Key), w)))
	return out
}

// maxDraftLines bounds the kept draft on screen; the rest of a long one is
// in the status line once the person moves on.
const maxDraftLines = 4

// decisionSource says by whom and when, as far as the store records it.
func decisionSource(d Decided, known bool, seen time.Time) string {
	by := "by: not recorded by this store"
	if d.Channel != "" {
		by = "by " + sanitize.Line(d.Channel)
	}
	at := "seen at " + clock(seen)
	if known && !d.Req.DecidedAt.IsZero() {
		at = "at " + clock(d.Req.DecidedAt)
	}
	return by + " · " + at
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

// DecisionWords says what was decided, in words, made safe to draw.
func DecisionWords(r store.Request) string { return sanitize.Line(store.DecisionWords(r)) }

// decisionKey reports whether a key would decide a request.
func (p *Approvals) decisionKey(msg tea.KeyPressMsg) bool {
	km := p.env.Keys
	for _, b := range []key.Binding{km.Approve, km.Deny, km.DenyReason, km.Answer, km.Revise, km.Open} {
		if key.Matches(msg, b) {
			return true
		}
	}
	return false
}

// SetHeldChannel says who decided the held approval (read from its run's
// policy events after the row said what).
func (p *Approvals) SetHeldChannel(key store.RequestKey, channel string) {
	p.bump()
	if p.held == nil || p.held.item.Req.Key() != key || channel == "" {
		return
	}
	p.held.dec.Channel = channel
	p.laidHead = nil
	p.layout()
}
