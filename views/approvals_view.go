package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// View draws the queue: the list of requests, the selected one in full, and
// a footer with the keys, a prompt, or what the last decision did.
func (p *Approvals) View(focused bool) string {
	if p.hist.on {
		return p.historyView(focused)
	}
	t, w, h, now := p.env.Theme, p.w, p.h, p.env.Now()
	inner := w - 2
	note := ""
	waits, orphans := 0, 0
	for _, it := range p.items {
		if it.Decided != nil {
			continue // decided elsewhere, held in place
		}
		if it.Req.Waits() {
			waits++
		} else {
			orphans++
		}
	}
	if waits > 0 {
		note = t.Warning.Render(fmt.Sprintf("%d waiting", waits))
	}
	if orphans > 0 {
		// Listed so a person sees them, but nothing reads a decision on one.
		if note != "" {
			note += t.Muted.Render(" · ")
		}
		note += t.Muted.Render(fmt.Sprintf("%d orphaned", orphans))
	}
	if p.readOnly != "" {
		if note != "" {
			note += t.Muted.Render(" · ")
		}
		note += t.Muted.Render("read-only")
	}
	if len(p.items) == 0 {
		body := []string{t.Muted.Render("  nothing waits on a human"), "  " + t.hints([]key.Binding{keymap.Hint(p.env.Keys.Decided, "shows what was decided")})}
		if p.status != "" {
			body = append(body, "")
			for _, l := range wrap(p.status, inner) {
				body = append(body, p.statusLine(t, l))
			}
		}
		return t.Frame("6 Approvals", note, body, w, h, focused)
	}
	if s := p.search.Note(p.env, p.list.Cursor); s != "" {
		note = fitNote("6 Approvals", w, []string{s, note})
	}
	it, _ := p.current()
	footer := p.footerLines(t, it, inner, now)
	fit := fitQueue(h-2, len(p.items), len(p.laidHead), len(p.laidBody), len(footer))
	p.list.SetHeight(fit.list)
	var body []string
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.search.Highlight(t, p.row(t, p.items[i], i == p.list.Cursor, focused, inner, now)))
	}
	for len(body) < fit.list {
		body = append(body, "")
	}
	body = append(body, p.listRule(t, inner))
	body = append(body, renderLines(t, p.laidHead[:fit.head])...)
	content := p.laidBody
	scroll := min(p.scroll, max(len(content)-fit.content, 0))
	end := min(scroll+fit.content, len(content))
	body = append(body, renderLines(t, content[scroll:end])...)
	for len(body) < h-2-len(footer)-1 {
		body = append(body, "")
	}
	more := ""
	if len(content) > 0 && fit.content == 0 {
		more = fmt.Sprintf(" %s not shown · %s zooms ", plural(len(content), "line"), p.env.Keys.Zoom.Help().Key)
	} else if len(content) > fit.content {
		km := p.env.Keys
		more = fmt.Sprintf(" %d–%d of %d lines · %s/%s ", min(scroll+1, end), end, len(content), km.PageUp.Help().Key, km.PageDown.Help().Key)
		if p.OpensWhole() {
			more += fmt.Sprintf("· %s whole ", km.Open.Help().Key) // approvals_whole.go
		}
	}
	body = append(body, t.Faint.Render(strings.Repeat("─", max(inner-textfmt.Width(more), 0)))+t.Muted.Render(more))
	body = append(body, footer...)
	return t.FrameScroll("6 Approvals", note, body, w, h, focused, Scrollbar{Rows: fit.list, From: from, To: to, Total: len(p.items)})
}

func (p *Approvals) row(t *Theme, it ApprovalItem, selected, focused bool, w int, now time.Time) string {
	r := it.Req
	what := requestLine(r)
	glyph := "◆"
	if !it.Delivery.Writable() {
		glyph = "‖"
	}
	if it.Decided != nil {
		glyph = decidedGlyph(it.Decided.Req)
	}
	age := ""
	if !it.FirstSeen.IsZero() {
		age = " · " + strings.TrimSuffix(textfmt.Ago(it.FirstSeen, now), " ago")
	}
	right, rightW := askerRight(sanitize.Line(it.Asker), fmt.Sprintf(" · step %d", r.Step), age, w/2)
	left := textfmt.Cut(glyph+" "+what, max(w-rightW-1, 8))
	line := textfmt.PadRight(left, w-rightW) + textfmt.PadLeft(textfmt.Cut(right, rightW), rightW)
	if selected {
		return selectStyle(t, focused).Render(textfmt.Fit(line, w))
	}
	style := t.Text
	if !it.Delivery.Writable() || it.Decided != nil {
		style = t.Muted
	}
	return t.Waiting.Render(glyph) + style.Render(textfmt.PadRight(strings.TrimPrefix(left, glyph), w-rightW-textfmt.Width(glyph))) + t.Muted.Render(textfmt.PadLeft(textfmt.Cut(right, rightW), rightW))
}

// describe lays the selected request out: a head and its content lines.
func describe(it ApprovalItem, w int) (head, content []styledLine) {
	r := it.Req
	asker := askedBy(sanitize.Line(it.Asker), r.Step, w)
	switch r.Kind {
	case store.Approval:
		head = append(head, one(roleBold, textfmt.Cut(fmt.Sprintf("%s %s", strings.ToUpper(sanitize.Line(r.Act)), sanitize.Line(r.Target)), w)))
		head = append(head, one(roleMuted, textfmt.Cut(asker, w)))
		if f := r.For; f.RunID != "" {
			link := "for " + sanitize.Line(f.Format) + " run " + sanitize.Line(f.RunID)
			if f.CallID != "" {
				link += " · call " + sanitize.Line(f.CallID)
			}
			head = append(head, one(roleMuted, textfmt.Cut(link, w)))
		}
		if r.AlwaysAllow != "" && r.Waits() {
			head = append(head, one(roleMuted, textfmt.Cut("A also allows from now on: "+sanitize.Line(r.AlwaysAllow), w)))
		}
		if r.HasContent {
			label := fmt.Sprintf("content (%s bytes):", textfmt.Thousands(r.ContentBytes))
			if r.Act == "write" {
				label = fmt.Sprintf("content to be written (%s bytes):", textfmt.Thousands(r.ContentBytes))
			}
			head = append(head, one(roleMuted, label))
			// Number the content's own lines; a wrapped line's rest gets none.
			for i, src := range strings.Split(strings.TrimRight(sanitize.Text(r.Content), "\n"), "\n") {
				for j, l := range wrap(src, max(w-5, 1)) {
					num := ""
					if j == 0 {
						num = strconv.Itoa(i + 1)
					}
					content = append(content, styledLine{{roleFaint, textfmt.PadLeft(num, 4) + " "}, {roleText, l}})
				}
			}
			if r.ContentBytes > int64(len(r.Content)) {
				content = append(content, one(roleWarning, fmt.Sprintf("✂ showing the first %d KB of %s bytes", store.MaxContentBytes>>10, textfmt.Thousands(r.ContentBytes))))
			}
		}
	case store.Question:
		head = append(head, one(roleMuted, textfmt.Cut(asker, w)))
		for _, l := range wrap(sanitize.Text(r.Question), w) {
			content = append(content, one(roleBold, l))
		}
		if r.Context != "" {
			for _, l := range wrap(sanitize.Text(r.Context), w) {
				content = append(content, one(roleMuted, l))
			}
		}
		for i, c := range r.Choices {
			content = append(content, one(roleText, textfmt.Cut(fmt.Sprintf("  %d. %s", i+1, sanitize.Line(c)), w)))
		}
	case store.Plan:
		head = append(head, one(roleBold, fmt.Sprintf("plan %s: %d steps", sanitize.Line(r.ID), len(r.PlanSteps))))
		head = append(head, one(roleMuted, textfmt.Cut(asker, w)))
		for i, s := range r.PlanSteps {
			line := fmt.Sprintf("%2d. %s", i+1, sanitize.Line(s.Intent))
			if s.Agent != "" {
				line = fmt.Sprintf("%2d. [%s] %s", i+1, sanitize.Line(s.Agent), sanitize.Line(s.Intent))
			}
			for _, l := range wrap(line, w) {
				content = append(content, one(roleText, l))
			}
		}
	}
	return head, content
}

func (p *Approvals) statusLine(t *Theme, line string) string {
	if p.statusOK {
		return t.Good.Render(line)
	}
	return t.Bad.Render(line)
}

// requestLine names a request in a list row: its kind and id, and what it
// asks (the act and target, the question, the plan's length).
func requestLine(r store.Request) string {
	switch r.Kind {
	case store.Approval:
		return fmt.Sprintf("approval %s  %-5s %s", sanitize.Line(r.ID), sanitize.Line(r.Act), sanitize.Line(r.Target))
	case store.Question:
		return fmt.Sprintf("question %s  %s", sanitize.Line(r.ID), sanitize.Line(r.Question))
	case store.Plan:
		return fmt.Sprintf("plan %s  %d steps", sanitize.Line(r.ID), len(r.PlanSteps))
	}
	return ""
}
