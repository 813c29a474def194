package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// The Approvals pane's second list: the decided requests of the open run's
// tree, what was decided, by whom and when. The Decided key switches
// between the two; the waiting queue keeps its cursor meanwhile.

// HistoryItem is one decided request.
type HistoryItem struct {
	Rec   store.DecisionRecord
	Asker string // the asking agent's chain
}

// history is the decided list and its layout.
type history struct {
	on     bool
	items  []HistoryItem
	list   List
	scroll int
	tree   string // whose tree it lists ("#4 …")

	laid     store.RequestKey
	laidW    int
	laidHead []styledLine
	laidBody []styledLine
	contentH int
}

// SetHistory replaces the decided requests listed for a tree.
func (p *Approvals) SetHistory(tree string, items []HistoryItem) {
	p.bump()
	h := &p.hist
	var sel store.RequestKey
	if h.list.Cursor < len(h.items) {
		sel = h.items[h.list.Cursor].Rec.Key()
	}
	h.items, h.tree = items, tree
	h.list.SetLen(len(items))
	for i, it := range items {
		if it.Rec.Key() == sel {
			h.list.Select(i)
		}
	}
	h.laidHead = nil
	p.layoutHistory()
}

// ShowingDecided reports whether the pane lists decided requests.
func (p *Approvals) ShowingDecided() bool { return p.hist.on }

// ShowWaiting switches back to the waiting queue.
func (p *Approvals) ShowWaiting() {
	p.bump()
	p.hist.on = false
}

func (p *Approvals) layoutHistory() {
	h, inner := &p.hist, p.w-2
	if len(h.items) == 0 || inner < 1 {
		return
	}
	listH := max(min(len(h.items), (p.h-2)/3), 1) // a third of the pane, as the queue's list
	h.list.SetHeight(listH)
	it := h.items[min(h.list.Cursor, len(h.items)-1)]
	if it.Rec.Key() != h.laid || inner != h.laidW || h.laidHead == nil {
		head, body := describe(ApprovalItem{Req: it.Rec.Request, Asker: it.Asker}, inner)
		h.laidHead = append(decidedLines(it.Rec, inner), head...)
		h.laidBody = body
		h.laid, h.laidW = it.Rec.Key(), inner
		h.scroll = 0
	}
	h.contentH = max(p.h-2-listH-1-len(h.laidHead)-1, 1)
	h.scroll = min(h.scroll, max(len(h.laidBody)-h.contentH, 0))
}

// decidedLines say what was decided, by whom and when.
func decidedLines(r store.DecisionRecord, w int) []styledLine {
	role := roleGood
	if v := store.Verdict(r.Decision); v == store.VerdictDeny || v == store.VerdictCancel {
		role = roleBad
	}
	by := "by: not recorded by this store"
	if r.Channel != "" {
		by = "by " + sanitize.Line(r.Channel)
	}
	at := "at: not recorded by this store"
	if !r.DecidedAt.IsZero() {
		at = "at " + clock(r.DecidedAt)
	}
	return []styledLine{
		one(role, textfmt.Cut(DecisionWords(r.Request), w)),
		one(roleMuted, textfmt.Cut(by+" · "+at, w)),
	}
}

// historyKey handles a key while the decided list shows.
func (p *Approvals) historyKey(msg tea.KeyPressMsg) Intent {
	h, km := &p.hist, p.env.Keys
	switch {
	case key.Matches(msg, km.Decided):
		h.on = false
		p.layout()
		return redraw
	case key.Matches(msg, km.PageDown):
		h.scroll = min(h.scroll+max(h.contentH-1, 1), max(len(h.laidBody)-h.contentH, 0))
		return redraw
	case key.Matches(msg, km.PageUp):
		h.scroll = max(h.scroll-max(h.contentH-1, 1), 0)
		return redraw
	}
	if moveList(&h.list, msg, km) {
		p.layoutHistory()
		return redraw
	}
	if p.decisionKey(msg) {
		p.say(false, "these are decided: %s shows what waits", km.Decided.Help().Key)
		return redraw
	}
	return Intent{}
}

// historyView draws the decided list and the selected one.
func (p *Approvals) historyView(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	hs := &p.hist
	note := t.Muted.Render(fmt.Sprintf("%d decided", len(hs.items)))
	title := "6 Approvals · decided"
	if hs.tree != "" {
		title += " · " + sanitize.Line(hs.tree)
	}
	km := p.env.Keys
	back := t.hints([]key.Binding{keymap.Hint(km.Decided, "show waiting")})
	if len(hs.items) == 0 {
		body := []string{t.Muted.Render("  nothing in this run's tree has been decided"), "", back}
		return t.Frame(title, note, body, w, h, focused)
	}
	var body []string
	from, to := hs.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.historyRow(t, hs.items[i], i == hs.list.Cursor, focused, inner))
	}
	for len(body) < hs.list.height {
		body = append(body, "")
	}
	body = append(body, t.Faint.Render(strings.Repeat("─", inner)))
	body = append(body, renderLines(t, hs.laidHead)...)
	end := min(hs.scroll+hs.contentH, len(hs.laidBody))
	body = append(body, renderLines(t, hs.laidBody[hs.scroll:end])...)
	for len(body) < h-3 {
		body = append(body, "")
	}
	foot := back
	if p.status != "" {
		foot = p.statusLine(t, textfmt.Cut(p.status, inner-textfmt.Width(back)-3)) + "   " + back
	}
	body = append(body, foot)
	return t.Frame(title, note, body, w, h, focused)
}

func (p *Approvals) historyRow(t *Theme, it HistoryItem, selected, focused bool, w int) string {
	r := it.Rec
	what := requestLine(r.Request)
	right, rightW := askerRight(sanitize.Line(it.Asker), fmt.Sprintf(" · step %d", r.Step), "", w/4)
	midW := min(26, w/4)
	leftW := max(w-rightW-midW-2, 8)
	line := textfmt.PadRight(decidedGlyph(r.Request)+" "+what, leftW) + " " + textfmt.PadRight(DecisionWords(r.Request), midW) + " " +
		textfmt.PadLeft(textfmt.Cut(right, rightW), rightW)
	if selected {
		return selectStyle(t, focused).Render(textfmt.Fit(line, w))
	}
	return t.Muted.Render(textfmt.Fit(line, w))
}
