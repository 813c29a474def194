package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// ApprovalItem is one request in the queue.
type ApprovalItem struct {
	Req       store.Request
	Asker     string // the asking agent's chain: "#1 coordinator › #3 worker"
	Delivery  store.Delivery
	Why       string // why it cannot be decided, one line ("" when it can)
	FirstSeen time.Time
	// Decided is set on a request that no longer waits but is kept in
	// place because the person was on it when someone else decided it.
	Decided *Decided
}

type queueMode int

const (
	browsing queueMode = iota
	confirming
	answering
	revising
	reasoning // typing the reason for a deny or a cancel (approvals_reason.go)
)

// Approvals is the queue of everything waiting on a human, oldest first.
type Approvals struct {
	revision // bumped by every change to what it draws (revision.go)

	env      *Env
	w, h     int
	list     List
	items    []ApprovalItem
	selected store.RequestKey
	guard    Guard
	mode     queueMode
	verdict  store.Verdict // the verdict being confirmed
	always   bool          // the approval being confirmed takes the request's always-allow
	input    textinput.Model
	scroll   int // content scroll
	contentH int // content lines shown
	status   string
	statusOK bool
	readOnly string // why deciding is disabled for the whole store ("" if it is not)
	search   Search // approvals_search.go

	held    *held                        // the selected request, decided elsewhere (approvals_held.go)
	recent  map[store.RequestKey]Decided // decisions the store reported since the last SetItems
	mine    store.RequestKey             // the request this pane last sent a decision for
	hist    history                      // the decided requests (approvals_history.go)
	reasons Reasons                      // what the store's format carries with a deny (approvals_reason.go)
	kept    string                       // unsent text of a request decided elsewhere, for the next text field
	drafts  map[store.RequestKey]string  // text typed and put aside with esc, by request (approvals_drafts.go)

	// The selected request laid out for a width: a write's content can be a
	// megabyte, too much to wrap again on every frame.
	laid     store.RequestKey
	laidW    int
	laidHead []styledLine
	laidBody []styledLine
}

// NewApprovals makes an empty queue.
func NewApprovals(env *Env) *Approvals {
	return &Approvals{env: env, input: newInput("› ", ""), search: newSearch(env)}
}

// SetSize lays the queue out for w×h.
func (p *Approvals) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.layout()
	p.layoutHistory()
}

// layout derives the geometry from the size, the number of requests and
// the one selected: the list's height, the selected request wrapped, how
// many of its lines fit, the input's width.
func (p *Approvals) layout() {
	inner := p.w - 2
	p.input.SetWidth(max(inner-4, 4))
	if len(p.items) == 0 || inner < 1 {
		return // nothing to lay out, or not sized yet (off screen)
	}
	it, _ := p.current()
	if it.Req.Key() != p.laid || inner != p.laidW || p.laidHead == nil {
		p.laidHead, p.laidBody = describe(it, inner)
		if it.Decided != nil {
			p.laidHead = append(p.heldNotice(inner), p.laidHead...)
		}
		p.laid, p.laidW = it.Req.Key(), inner
	}
	// The list, the request's head and content as they fit beside the
	// footer (approvals_fit.go).
	foot := len(p.footerLines(p.env.Theme, it, inner, p.env.Now()))
	fit := fitQueue(p.h-2, len(p.items), len(p.laidHead), len(p.laidBody), foot)
	p.list.SetHeight(fit.list)
	p.contentH = max(fit.content, 1)
	p.scroll = min(p.scroll, p.maxScroll())
}

func (p *Approvals) maxScroll() int { return max(len(p.laidBody)-p.contentH, 0) }

// SetReadOnly disables deciding for the whole store, with the reason.
func (p *Approvals) SetReadOnly(why string) {
	p.bump()
	p.readOnly = why
}

// SetItems replaces the queue. A request not seen before arms the misfire
// guard; the cursor stays on the same request.
func (p *Approvals) SetItems(items []ApprovalItem, now time.Time) {
	before, had := p.look(), p.items
	p.setItems(items, now)
	if p.look() != before || !sameApprovalItems(had, p.items) {
		p.bump()
	}
}

func (p *Approvals) setItems(items []ApprovalItem, now time.Time) {
	known := map[store.RequestKey]bool{}
	for _, it := range p.items {
		known[it.Req.Key()] = true
	}
	for _, it := range items {
		if !known[it.Req.Key()] {
			p.guard.Arm(now)
			break
		}
	}
	present := false
	for _, it := range items {
		present = present || it.Req.Key() == p.selected
	}
	switch {
	case present:
		p.held = nil // it waits again (a store put back)
	case p.selected == p.mine && p.held == nil:
		// This pane's own decision settled it: the next request comes up.
		if p.mode != browsing {
			p.mode = browsing
			p.input.Blur()
		}
	case p.selected != (store.RequestKey{}) && (p.decidedRecently(p.selected) || p.mode != browsing || p.held != nil):
		// Someone else decided the request under the cursor (the store says
		// so), or it left the list under an open prompt: it stays in place,
		// saying what happened, and any prompt about it closes.
		p.hold(now)
	default:
		// Gone without a word from the store (it was read again): the
		// cursor moves on, as nothing was open on it.
	}
	p.recent = nil
	p.pruneDrafts(items)
	items = p.withHeld(items)
	if was, is := laidIn(p.items, p.laid), laidIn(items, p.laid); was == nil || is == nil || !sameApprovalItem(*was, *is) {
		p.laidHead, p.laidBody = nil, nil // laid out again below, from what the store holds now
		if was != nil && is != nil && !was.Req.Equal(is.Req) {
			p.guard.Arm(now) // another request under its id: a key meant for the one read must not decide it
		}
	}
	p.items = items
	p.list.SetLen(len(items))
	p.search.Index(len(items), p.requestText)
	for i, it := range items {
		if it.Req.Key() == p.selected {
			p.list.Select(i)
			p.layout()
			return
		}
	}
	p.remember(now)
}

// laidIn is the request under key in items, or nil. The request laid out
// is looked up by key and compared whole: a store rewritten in place (cp
// over it) can hold another request under the same id, and a person must
// never read one question and answer another.
func laidIn(items []ApprovalItem, key store.RequestKey) *ApprovalItem {
	for i := range items {
		if items[i].Req.Key() == key {
			return &items[i]
		}
	}
	return nil
}

// Focus arms the guard: a fresh look at the queue reads before it decides.
func (p *Approvals) Focus() {
	p.bump()
	p.guard.Arm(p.env.Now())
}

// Capturing reports whether keys go to a prompt or input in this pane.
func (p *Approvals) Capturing() bool { return p.mode != browsing || p.search.Typing() }

// Quiet reports whether decision keys are paused now.
func (p *Approvals) Quiet(now time.Time) bool { return p.guard.Quiet(now) }

// Count is how many requests are listed as waiting (a request held in
// place after someone else decided it is not).
func (p *Approvals) Count() int {
	if p.held != nil {
		return len(p.items) - 1
	}
	return len(p.items)
}

// remember notes the request under the cursor; a newly selected one starts
// at the top of its content and arms the guard.
func (p *Approvals) remember(now time.Time) {
	if p.list.Cursor < len(p.items) {
		k := p.items[p.list.Cursor].Req.Key()
		if k != p.selected {
			p.selected, p.scroll = k, 0
			p.guard.Arm(now)
			p.release()
		}
	}
	p.layout()
}

// Current is the request under the cursor.
func (p *Approvals) Current() (ApprovalItem, bool) { return p.current() }

func (p *Approvals) current() (ApprovalItem, bool) {
	if p.list.Cursor < len(p.items) {
		return p.items[p.list.Cursor], true
	}
	return ApprovalItem{}, false
}

// say sets the status line; it may quote store text, so it is made safe.
func (p *Approvals) say(ok bool, format string, a ...any) {
	p.status, p.statusOK = sanitize.Line(fmt.Sprintf(format, a...)), ok
	p.layout() // the footer may take more or fewer lines
}

// Paste adds a bracketed paste to the answer, revision or reason being
// typed, or to the search; with neither open it is dropped.
func (p *Approvals) Paste(text string) Intent {
	p.bump()
	switch {
	case p.mode == answering || p.mode == revising || p.mode == reasoning:
		feed(&p.input, tea.PasteMsg{Content: text})
		return redraw
	case p.mode == browsing && !p.hist.on && p.search.Paste(text):
		return p.toMatch(0)
	}
	return Intent{}
}

// Key runs the queue's keys: move, approve / deny with a confirmation,
// answer a question, revise or cancel a plan.
func (p *Approvals) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km, now := p.env.Keys, p.env.Now()
	if p.mode == browsing && p.hist.on {
		return p.historyKey(msg)
	}
	if p.mode == browsing && key.Matches(msg, km.Decided) {
		p.hist.on = true
		p.layoutHistory()
		return redraw
	}
	it, ok := p.current()
	switch p.mode {
	case confirming:
		switch {
		case key.Matches(msg, km.Confirm):
			p.mode = browsing
			in := p.decide(it, p.verdict, "")
			in.Decision.Always = p.always && p.verdict == store.VerdictApprove
			return in
		case key.Matches(msg, km.Cancel), key.Matches(msg, km.Back):
			p.mode = browsing
			p.say(true, "not decided")
		default:
			p.strayConfirmKey(msg) // approvals_why.go
		}
		return redraw
	case answering, revising, reasoning:
		switch {
		case key.Matches(msg, km.Dismiss):
			p.mode = browsing
			p.input.Blur()
			if p.keepDraft() {
				p.say(true, "not decided — what you typed is kept for %s; %s quits without it", it.Req.Key(), km.ForceQuit.Help().Key)
			} else {
				p.say(true, "not decided")
			}
		case key.Matches(msg, km.Submit):
			text := strings.TrimSpace(p.input.Value())
			if text == "" {
				p.say(false, "type something first (%s cancels)", km.Dismiss.Help().Key)
				return redraw
			}
			verdict := store.VerdictRevise
			if p.mode == reasoning {
				verdict = p.verdict
			}
			if p.mode == answering {
				verdict = "" // a question has no verdict: its answer is the text
				text = store.ChoiceAnswer(text, it.Req.Choices)
			}
			p.mode = browsing
			p.input.Blur()
			delete(p.drafts, it.Req.Key())
			return p.decide(it, verdict, text)
		default:
			feed(&p.input, msg)
		}
		return redraw
	}

	if in, ok := p.searchKey(msg); ok {
		return in
	}
	page := max(p.contentH-1, 1)
	switch {
	case key.Matches(msg, km.PageDown):
		p.scroll = min(p.scroll+page, p.maxScroll())
		return redraw
	case key.Matches(msg, km.PageUp):
		p.scroll = max(p.scroll-page, 0)
		return redraw
	}
	if moveList(&p.list, msg, km) {
		p.remember(now)
		return redraw
	}
	if !ok {
		return Intent{}
	}
	if it.Decided != nil {
		if p.decisionKey(msg) {
			p.say(false, "%s was already %s elsewhere: nothing to send", it.Req.Key(), DecisionWords(it.Decided.Req))
			return redraw
		}
		return Intent{}
	}
	var verdict store.Verdict
	answer, reason, always := false, false, false
	kind := it.Req.Kind
	switch {
	case key.Matches(msg, km.DenyReason) && kind == store.Approval:
		verdict, reason = store.VerdictDeny, true
	case key.Matches(msg, km.DenyReason) && kind == store.Plan:
		verdict, reason = store.VerdictCancel, true
	case key.Matches(msg, km.ApproveAlways) && kind == store.Approval:
		if it.Req.AlwaysAllow == "" {
			p.say(false, "%s also allows what the agent offers from now on; this request offers nothing: %s approves it once",
				km.ApproveAlways.Help().Key, km.Approve.Help().Key)
			return redraw
		}
		verdict, always = store.VerdictApprove, true
	case key.Matches(msg, km.Approve) && kind != store.Question:
		verdict = store.VerdictApprove
	case key.Matches(msg, km.Deny) && kind == store.Approval:
		verdict = store.VerdictDeny
	case key.Matches(msg, km.Deny) && kind == store.Plan:
		verdict = store.VerdictCancel
	case (key.Matches(msg, km.Answer) || key.Matches(msg, km.Open) || key.Matches(msg, km.Approve)) && kind == store.Question:
		answer = true
	case key.Matches(msg, km.Revise) && kind == store.Plan:
		verdict = store.VerdictRevise
	default:
		if why := p.misfitKey(msg, kind); why != "" {
			p.say(false, "%s", why)
			return redraw
		}
		return Intent{}
	}
	if !p.guard.Allow(now) {
		p.say(false, "keys paused a moment — read the request first")
		return redraw
	}
	if why := p.blocked(it); why != "" {
		p.say(false, "cannot decide: %s", why)
		return redraw
	}
	switch {
	case reason:
		return p.askReason(it, verdict)
	case answer:
		p.mode = answering
		p.input.SetValue(p.takeKept())
		p.input.Placeholder = "your answer"
		if len(it.Req.Choices) > 0 {
			p.input.Placeholder = "an answer, or the number of a choice"
		}
		p.input.Focus()
	case verdict == store.VerdictRevise:
		p.mode = revising
		p.input.SetValue(p.takeKept())
		p.input.Placeholder = "what to change in the plan"
		p.input.Focus()
	default:
		p.mode, p.verdict, p.always = confirming, verdict, always
	}
	p.status = ""
	return redraw
}

func (p *Approvals) blocked(it ApprovalItem) string {
	if p.readOnly != "" {
		return p.readOnly
	}
	if !it.Delivery.Writable() {
		return it.Why
	}
	return ""
}

func (p *Approvals) decide(it ApprovalItem, verdict store.Verdict, text string) Intent {
	p.say(true, "deciding…")
	p.mine = it.Req.Key()
	return Intent{Kind: Decide, Decision: store.Decision{Key: it.Req.Key(), Verdict: verdict, Text: text}}
}

// Result reports how a decision went, in the pane's status line.
func (p *Approvals) Result(d store.Decision, res store.DecideResult, err error) {
	p.bump()
	what := sanitize.Line(d.Key.String())
	switch {
	case err != nil:
		p.say(false, "%s not decided: %s", what, sanitize.Line(err.Error()))
	case res.Won:
		p.say(true, "✓ %s: %s", pastTense(d), what)
	default:
		won := store.Decision{Key: d.Key, Verdict: store.Verdict(res.Decision)}
		how := pastTense(won)
		if d.Key.Kind == store.Question {
			how = "answered “" + sanitize.Line(res.Decision) + "”"
		}
		if res.DecidedBy != "" {
			how += " by " + sanitize.Line(res.DecidedBy)
		}
		p.say(false, "✗ lost the race: %s was already %s", what, how)
	}
}

func pastTense(d store.Decision) string {
	switch {
	case d.Key.Kind == store.Question:
		return "answered"
	case d.Verdict == store.VerdictApprove:
		return "approved"
	case d.Verdict == store.VerdictDeny:
		return "denied"
	case d.Verdict == store.VerdictCancel:
		return "cancelled"
	case d.Verdict == store.VerdictRevise:
		return "sent back for revision"
	}
	return string(d.Verdict)
}

// Click selects the request clicked in the list.
func (p *Approvals) Click(x, y int) Intent {
	p.bump()
	if p.mode == browsing && p.hist.on {
		if p.hist.list.SelectVisible(y - 1) {
			p.layoutHistory()
			return redraw
		}
		return Intent{}
	}
	if p.mode != browsing || !p.list.SelectVisible(y-1) { // the top border
		return Intent{}
	}
	p.remember(p.env.Now())
	return redraw
}

// Wheel scrolls the selected request's content by d lines.
func (p *Approvals) Wheel(d int) Intent {
	p.bump()
	p.scroll = max(0, min(p.scroll+d, p.maxScroll()))
	return redraw
}

// ClearStatus drops the last decision's message.
func (p *Approvals) ClearStatus() {
	p.bump()
	p.status = ""
}
