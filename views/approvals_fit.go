package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// How the queue fits its height. The footer (the keys a request allows,
// why it cannot be decided, what the last decision did) is never cut: it
// wraps, and the rest gives way to it in this order — the request's
// content, the lines of its head after the first, the list after its
// first row. The list says which of its rows it shows when not all fit.

// queueFit is the queue's rows for an inner height.
type queueFit struct {
	list, head, content int
}

// fitQueue shares an inner height out among the list of n requests, a
// head of headN lines, contentN lines of content and a footer of footH
// lines (and the two rules between them). The list gives the selected
// request the rows it does not need: while the content does not fit, it
// shrinks to two rows (the selected request and a sign of the others).
func fitQueue(inner, n, headN, contentN, footH int) queueFit {
	avail := max(inner-footH-2, 1)
	list := max(min(n, inner/3), 1)
	list = min(list, max(avail-1, 1))
	fit := shareQueue(avail, list, headN)
	for fit.list > min(2, n) && fit.content < contentN {
		fit = shareQueue(avail, fit.list-1, headN)
	}
	return fit
}

// shareQueue gives a list of list rows its room and shares the rest of
// avail between the head and the content.
func shareQueue(avail, list, headN int) queueFit {
	rest := max(avail-list, 0)
	head := min(headN, rest)
	if rest >= 2 {
		head = min(headN, rest-1) // leave a line of content
	}
	return queueFit{list: list, head: head, content: max(rest-head, 0)}
}

// footerLines is the footer, wrapped to w cells.
func (p *Approvals) footerLines(t *Theme, it ApprovalItem, w int, now time.Time) []string {
	r := it.Req
	km := p.env.Keys
	switch p.mode {
	case confirming:
		v := string(p.verdict)
		q := fmt.Sprintf("%s %s? ", strings.ToUpper(v[:1])+v[1:], sanitize.Line(r.Key().String()))
		if r.Kind == store.Approval {
			q = fmt.Sprintf("%s %s %s? ", strings.ToUpper(v[:1])+v[1:], sanitize.Line(r.Act), sanitize.Line(r.Target))
			if p.always {
				q = fmt.Sprintf("Approve %s %s, and from now on %s? ", sanitize.Line(r.Act), sanitize.Line(r.Target), sanitize.Line(r.AlwaysAllow))
			}
		}
		answer := t.hints(km.ConfirmHints())
		return []string{t.Warning.Render(textfmt.Cut(q, w-textfmt.Width(answer))) + answer}
	case answering, revising, reasoning:
		return []string{inputView(p.input, t)}
	}
	var out []string
	why := p.blocked(it)
	if p.status != "" {
		style := t.Bad
		if p.statusOK {
			style = t.Good
		}
		for _, l := range wrap(p.status, w) {
			out = append(out, style.Render(l))
		}
		if why != "" && strings.HasSuffix(p.status, sanitize.Line(why)) {
			return out // "cannot decide: <why>" says it already
		}
	}
	var last string
	switch {
	case it.Decided != nil:
		last = t.Muted.Render("decided elsewhere — nothing to send")
	case why != "":
		for _, l := range wrap("‖ "+sanitize.Line(why), w) {
			out = append(out, t.Muted.Render(l))
		}
		return out
	case p.guard.Quiet(now):
		last = t.Muted.Render("keys paused a moment…")
	default:
		var offered []key.Binding
		switch r.Kind {
		case store.Approval:
			offered = km.ApprovalHints()
		case store.Question:
			offered = km.QuestionHints()
		case store.Plan:
			offered = km.PlanHints()
		}
		offered = append(offered, keymap.Hint(km.Decided, "decided"))
		last = t.hints(offered)
	}
	// The keys share the status's last line when they fit beside it.
	if n := len(out); n > 0 && textfmt.Width(out[n-1])+3+textfmt.Width(last) <= w {
		out[n-1] += "   " + last
		return out
	}
	return append(out, last)
}

// listRule is the rule under the list, saying which requests it shows
// when not all of them fit.
func (p *Approvals) listRule(t *Theme, w int) string {
	from, to := p.list.Visible()
	mark := ""
	if from > 0 || to < len(p.items) {
		mark = fmt.Sprintf(" %d–%d of %d requests · %s/%s ", from+1, to, len(p.items), p.env.Keys.Up.Help().Key, p.env.Keys.Down.Help().Key)
	}
	return t.Faint.Render(strings.Repeat("─", max(w-textfmt.Width(mark), 0))) + t.Muted.Render(mark)
}
