package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// Misfire guard timings: a decision key counts only once input has been
// quiet this long since a request appeared or came into view, but never
// waits longer than the ceiling, however fast one types.
const (
	QuietFor     = 425 * time.Millisecond
	QuietCeiling = 1500 * time.Millisecond
)

// Guard ignores decision keys for a short moment after something new is put
// in front of the user, so typing meant for elsewhere cannot approve.
type Guard struct {
	armed, until time.Time
}

// Arm starts a quiet period.
func (g *Guard) Arm(now time.Time) { g.armed, g.until = now, now.Add(QuietFor) }

// Allow reports whether a key pressed now may act. A key inside the quiet
// period is refused and extends it (up to the ceiling).
func (g *Guard) Allow(now time.Time) bool {
	if !now.Before(g.until) {
		return true
	}
	g.until = now.Add(QuietFor)
	if limit := g.armed.Add(QuietCeiling); g.until.After(limit) {
		g.until = limit
	}
	return false
}

// Quiet reports whether keys are being ignored now.
func (g *Guard) Quiet(now time.Time) bool { return now.Before(g.until) }

// ApprovalItem is one request in the queue.
type ApprovalItem struct {
	Req       store.Request
	Asker     string // the asking agent's chain: "#1 coordinator › #3 worker"
	Delivery  store.Delivery
	Why       string // why it cannot be decided, one line ("" when it can)
	FirstSeen time.Time
}

type queueMode int

const (
	browsing queueMode = iota
	confirming
	answering
	revising
)

// Approvals is the queue of everything waiting on a human, oldest first.
type Approvals struct {
	list     List
	items    []ApprovalItem
	selected store.RequestKey
	guard    Guard
	mode     queueMode
	verdict  store.Verdict // the verdict being confirmed
	input    textinput.Model
	scroll   int // content scroll
	contentH int
	status   string
	statusOK bool
	readOnly string // why deciding is disabled for the whole store ("" if it is not)

	// The selected request laid out for a width: a write's content can be a
	// megabyte, too much to wrap again on every frame.
	laid     store.RequestKey
	laidW    int
	laidT    *Theme
	laidHead []string
	laidBody []string
}

// NewApprovals makes an empty queue.
func NewApprovals() *Approvals { return &Approvals{input: newInput("› ", "")} }

// SetReadOnly disables deciding for the whole store, with the reason.
func (p *Approvals) SetReadOnly(why string) { p.readOnly = why }

// SetItems replaces the queue. A request not seen before arms the misfire
// guard; the cursor stays on the same request.
func (p *Approvals) SetItems(items []ApprovalItem, now time.Time) {
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
	p.items = items
	p.list.SetLen(len(items))
	for i, it := range items {
		if it.Req.Key() == p.selected {
			p.list.Select(i)
			return
		}
	}
	// The request under the cursor went away (decided): drop any prompt
	// about it.
	if p.mode != browsing {
		p.mode = browsing
		p.input.Blur()
	}
	p.remember(now)
}

// Focus is called when the pane gains focus: a fresh look arms the guard.
func (p *Approvals) Focus(now time.Time) { p.guard.Arm(now) }

// Capturing reports whether keys go to a prompt or input in this pane.
func (p *Approvals) Capturing() bool { return p.mode != browsing }

// Quiet reports whether decision keys are paused now.
func (p *Approvals) Quiet(now time.Time) bool { return p.guard.Quiet(now) }

// Count is how many requests wait.
func (p *Approvals) Count() int { return len(p.items) }

func (p *Approvals) remember(now time.Time) {
	if p.list.Cursor < len(p.items) {
		k := p.items[p.list.Cursor].Req.Key()
		if k != p.selected {
			p.selected, p.scroll = k, 0
			p.guard.Arm(now)
		}
	}
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
}

// HandleKey runs the queue's keys: move, approve / deny with a
// confirmation, answer a question, revise or cancel a plan.
func (p *Approvals) HandleKey(msg tea.KeyPressMsg, km keymap.KeyMap, now time.Time) Intent {
	it, ok := p.current()
	switch p.mode {
	case confirming:
		switch {
		case key.Matches(msg, km.Confirm):
			p.mode = browsing
			return p.decide(it, p.verdict, "")
		case key.Matches(msg, km.Cancel), key.Matches(msg, km.Back):
			p.mode = browsing
			p.say(true, "not decided")
		}
		return Intent{Kind: Redraw}
	case answering, revising:
		switch msg.String() {
		case "esc":
			p.mode = browsing
			p.input.Blur()
			p.say(true, "not decided")
		case "enter":
			text := strings.TrimSpace(p.input.Value())
			if text == "" {
				p.say(false, "type something first (esc cancels)")
				return Intent{Kind: Redraw}
			}
			verdict := store.VerdictRevise
			if p.mode == answering {
				verdict = "" // a question has no verdict: its answer is the text
				if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(it.Req.Choices) {
					text = it.Req.Choices[n-1]
				}
			}
			p.mode = browsing
			p.input.Blur()
			return p.decide(it, verdict, text)
		default:
			feed(&p.input, msg)
		}
		return Intent{Kind: Redraw}
	}

	switch {
	case key.Matches(msg, km.PageDown):
		p.scroll += max(p.contentH-1, 1)
		return Intent{Kind: Redraw}
	case key.Matches(msg, km.PageUp):
		p.scroll = max(p.scroll-max(p.contentH-1, 1), 0)
		return Intent{Kind: Redraw}
	}
	if moveList(&p.list, msg, km) {
		p.remember(now)
		return Intent{Kind: Redraw}
	}
	if !ok {
		return Intent{}
	}
	var verdict store.Verdict
	answer := false
	kind := it.Req.Kind
	switch {
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
		return Intent{}
	}
	if !p.guard.Allow(now) {
		p.say(false, "keys paused a moment — read the request first")
		return Intent{Kind: Redraw}
	}
	if why := p.blocked(it); why != "" {
		p.say(false, "cannot decide: %s", why)
		return Intent{Kind: Redraw}
	}
	switch {
	case answer:
		p.mode = answering
		p.input.SetValue("")
		p.input.Placeholder = "your answer"
		if len(it.Req.Choices) > 0 {
			p.input.Placeholder = "an answer, or the number of a choice"
		}
		p.input.Focus()
	case verdict == store.VerdictRevise:
		p.mode = revising
		p.input.SetValue("")
		p.input.Placeholder = "what to change in the plan"
		p.input.Focus()
	default:
		p.mode, p.verdict = confirming, verdict
	}
	p.status = ""
	return Intent{Kind: Redraw}
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
	return Intent{Kind: Decide, Decision: store.Decision{Key: it.Req.Key(), Verdict: verdict, Text: text}}
}

// Result reports how a decision went, in the pane's status line.
func (p *Approvals) Result(d store.Decision, res store.DecideResult, err error) {
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

// Click selects the request at y of the list.
func (p *Approvals) Click(y int, now time.Time) Intent {
	if p.mode != browsing || !p.list.SelectVisible(y) {
		return Intent{}
	}
	p.remember(now)
	return Intent{Kind: Redraw}
}

// Scroll scrolls the selected request's content (mouse wheel).
func (p *Approvals) Scroll(d int) { p.scroll = max(p.scroll+d, 0) }

// ListHeight is how many rows the request list takes at a pane height.
func ListHeight(h, n int) int { return max(min(n, (h-2)/3), 1) }

// View draws the queue: the list of requests, the selected one in full, and
// a footer with the keys, a prompt, or what the last decision did.
func (p *Approvals) View(t *Theme, w, h int, focused bool, now time.Time) string {
	inner := w - 2
	note := ""
	if n := len(p.items); n > 0 {
		note = t.Warning.Render(fmt.Sprintf("%d waiting", n))
	}
	if p.readOnly != "" {
		note += t.Muted.Render(" · read-only")
	}
	if len(p.items) == 0 {
		body := []string{t.Muted.Render("  nothing waits on a human")}
		if p.status != "" {
			body = append(body, "", p.statusLine(t, inner))
		}
		return t.Frame("6 Approvals", note, body, w, h, focused)
	}
	listH := ListHeight(h, len(p.items))
	p.list.SetHeight(listH)
	var body []string
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.row(t, p.items[i], i == p.list.Cursor, focused, inner, now))
	}
	for len(body) < listH {
		body = append(body, "")
	}
	body = append(body, t.Faint.Render(strings.Repeat("─", inner)))
	it, _ := p.current()
	if it.Req.Key() != p.laid || inner != p.laidW || t != p.laidT {
		p.laidHead, p.laidBody = p.describe(t, it, inner)
		p.laid, p.laidW, p.laidT = it.Req.Key(), inner, t
	}
	head, content := p.laidHead, p.laidBody
	body = append(body, head...)
	p.contentH = max(h-2-len(body)-2, 1)
	p.scroll = min(p.scroll, max(len(content)-p.contentH, 0))
	end := min(p.scroll+p.contentH, len(content))
	body = append(body, content[p.scroll:end]...)
	for len(body) < h-4 {
		body = append(body, "")
	}
	more := ""
	if len(content) > p.contentH {
		more = fmt.Sprintf(" %d–%d of %d lines · pgup/pgdn ", p.scroll+1, end, len(content))
	}
	body = append(body, t.Faint.Render(strings.Repeat("─", max(inner-cellWidth(more), 0)))+t.Muted.Render(more))
	body = append(body, p.footer(t, it, inner, now))
	return t.Frame("6 Approvals", note, body, w, h, focused)
}

func (p *Approvals) row(t *Theme, it ApprovalItem, selected, focused bool, w int, now time.Time) string {
	r := it.Req
	var what string
	switch r.Kind {
	case store.Approval:
		what = fmt.Sprintf("approval %s  %-5s %s", sanitize.Line(r.ID), sanitize.Line(r.Act), sanitize.Line(r.Target))
	case store.Question:
		what = fmt.Sprintf("question %s  %s", sanitize.Line(r.ID), sanitize.Line(r.Question))
	case store.Plan:
		what = fmt.Sprintf("plan %s  %d steps", sanitize.Line(r.ID), len(r.PlanSteps))
	}
	glyph := "◆"
	if !it.Delivery.Writable() {
		glyph = "‖"
	}
	age := ""
	if !it.FirstSeen.IsZero() {
		age = " · " + strings.TrimSuffix(Ago(it.FirstSeen, now), " ago")
	}
	right := fmt.Sprintf("%s · step %d%s", sanitize.Line(it.Asker), r.Step, age)
	rightW := min(cellWidth(right), w/2)
	left := Cut(glyph+" "+what, max(w-rightW-1, 8))
	line := PadRight(left, w-rightW) + PadLeft(Cut(right, rightW), rightW)
	if selected {
		return selectStyle(t, focused).Render(Fit(line, w))
	}
	style := t.Text
	if !it.Delivery.Writable() {
		style = t.Muted
	}
	return t.Waiting.Render(glyph) + style.Render(PadRight(strings.TrimPrefix(left, glyph), w-rightW-cellWidth(glyph))) + t.Muted.Render(PadLeft(Cut(right, rightW), rightW))
}

// describe renders the selected request: a header and its content lines.
func (p *Approvals) describe(t *Theme, it ApprovalItem, w int) (head, content []string) {
	r := it.Req
	asker := fmt.Sprintf("asked by %s at step %d", sanitize.Line(it.Asker), r.Step)
	switch r.Kind {
	case store.Approval:
		head = append(head, t.Bold.Render(Cut(fmt.Sprintf("%s %s", strings.ToUpper(sanitize.Line(r.Act)), sanitize.Line(r.Target)), w)))
		head = append(head, t.Muted.Render(Cut(asker, w)))
		if r.HasContent {
			label := fmt.Sprintf("content (%s bytes):", Thousands(r.ContentBytes))
			if r.Act == "write" {
				label = fmt.Sprintf("content to be written (%s bytes):", Thousands(r.ContentBytes))
			}
			head = append(head, t.Muted.Render(label))
			// Number the content's own lines; a wrapped line's rest gets none.
			for i, src := range strings.Split(strings.TrimRight(sanitize.Text(r.Content), "\n"), "\n") {
				for j, l := range wrap(src, max(w-5, 1)) {
					num := ""
					if j == 0 {
						num = strconv.Itoa(i + 1)
					}
					content = append(content, t.Faint.Render(PadLeft(num, 4)+" ")+t.Text.Render(l))
				}
			}
			if r.ContentBytes > int64(len(r.Content)) {
				content = append(content, t.Warning.Render(fmt.Sprintf("✂ showing the first %d KB of %s bytes", store.MaxContentBytes>>10, Thousands(r.ContentBytes))))
			}
		}
	case store.Question:
		head = append(head, t.Muted.Render(Cut(asker, w)))
		for _, l := range wrap(sanitize.Text(r.Question), w) {
			content = append(content, t.Bold.Render(l))
		}
		if r.Context != "" {
			for _, l := range wrap(sanitize.Text(r.Context), w) {
				content = append(content, t.Muted.Render(l))
			}
		}
		for i, c := range r.Choices {
			content = append(content, t.Text.Render(Cut(fmt.Sprintf("  %d. %s", i+1, sanitize.Line(c)), w)))
		}
	case store.Plan:
		head = append(head, t.Bold.Render(fmt.Sprintf("plan %s: %d steps", sanitize.Line(r.ID), len(r.PlanSteps))))
		head = append(head, t.Muted.Render(Cut(asker, w)))
		for i, s := range r.PlanSteps {
			line := fmt.Sprintf("%2d. %s", i+1, sanitize.Line(s.Intent))
			if s.Agent != "" {
				line = fmt.Sprintf("%2d. [%s] %s", i+1, sanitize.Line(s.Agent), sanitize.Line(s.Intent))
			}
			for _, l := range wrap(line, w) {
				content = append(content, t.Text.Render(l))
			}
		}
	}
	return head, content
}

func (p *Approvals) footer(t *Theme, it ApprovalItem, w int, now time.Time) string {
	r := it.Req
	switch p.mode {
	case confirming:
		v := string(p.verdict)
		q := fmt.Sprintf("%s %s? ", strings.ToUpper(v[:1])+v[1:], sanitize.Line(r.Key().String()))
		if r.Kind == store.Approval {
			q = fmt.Sprintf("%s %s %s? ", strings.ToUpper(v[:1])+v[1:], sanitize.Line(r.Act), sanitize.Line(r.Target))
		}
		return t.Warning.Render(Cut(q, w-14)) + t.Key.Render("y") + t.Muted.Render(" yes  ") + t.Key.Render("n") + t.Muted.Render(" no")
	case answering, revising:
		p.input.SetWidth(max(w-4, 4))
		return p.input.View()
	}
	// The last decision's outcome comes first; what the selected request
	// allows follows when there is room.
	lead := ""
	if p.status != "" {
		lead = p.statusLine(t, w)
		if cellWidth(lead)+3 >= w {
			return lead
		}
		lead += "   "
	}
	rest := w - cellWidth(lead)
	if why := p.blocked(it); why != "" {
		return lead + t.Muted.Render(Cut("‖ "+sanitize.Line(why), rest))
	}
	if p.guard.Quiet(now) {
		return lead + t.Muted.Render(Cut("keys paused a moment…", rest))
	}
	var keys []string
	switch r.Kind {
	case store.Approval:
		keys = []string{"a", "approve", "d", "deny"}
	case store.Question:
		keys = []string{"enter", "answer"}
	case store.Plan:
		keys = []string{"a", "approve", "r", "revise", "d", "cancel"}
	}
	var b strings.Builder
	for i := 0; i < len(keys); i += 2 {
		b.WriteString(t.Key.Render(keys[i]) + t.Muted.Render(" "+keys[i+1]+"  "))
	}
	if cellWidth(b.String()) > rest {
		return strings.TrimRight(lead, " ")
	}
	return lead + b.String()
}

func (p *Approvals) statusLine(t *Theme, w int) string {
	if p.statusOK {
		return t.Good.Render(Cut(p.status, w))
	}
	return t.Bad.Render(Cut(p.status, w))
}

// ClearStatus drops the last decision's message.
func (p *Approvals) ClearStatus() { p.status = "" }
