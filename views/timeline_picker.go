package views

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
)

// The step filter's picker: t lists every filter the steps offer (a tool,
// no tool call, retried, a kind, not committed yet) for one to be chosen
// with the arrows and enter, instead of cycling one a press. esc closes it
// with nothing changed. A filter chosen remembers the step the cursor was
// on, and esc, clearing the filter, puts the cursor back there.

// facetPicker is the open picker: the labels offered and the one under its
// cursor. A small hand-made list: bubbles' list brings a filter, a
// paginator and a status bar that a handful of rows has no use for.
type facetPicker struct {
	on     bool
	labels []string
	cursor int
}

// openPicker lists the filters, its cursor on the one applied.
func (p *Timeline) openPicker() {
	p.picker = facetPicker{on: true}
	for i, f := range p.src.Facets().list() {
		p.picker.labels = append(p.picker.labels, f.label)
		if f.label == p.facet {
			p.picker.cursor = i
		}
	}
}

// pickerKey runs a key while the picker is open.
func (p *Timeline) pickerKey(msg tea.KeyPressMsg) Intent {
	km := p.env.Keys
	pk := &p.picker
	switch {
	case key.Matches(msg, km.Up):
		pk.cursor = max(pk.cursor-1, 0)
	case key.Matches(msg, km.Down):
		pk.cursor = min(pk.cursor+1, len(pk.labels)-1)
	case key.Matches(msg, km.Top):
		pk.cursor = 0
	case key.Matches(msg, km.Bottom):
		pk.cursor = len(pk.labels) - 1
	case key.Matches(msg, km.Open):
		pk.on = false
		return p.setFacet(pk.labels[pk.cursor])
	case key.Matches(msg, km.Back), key.Matches(msg, km.StepFilter), key.Matches(msg, km.Quit):
		pk.on = false // nothing chosen: the filter and the cursor as they were
	}
	return redraw
}

// setFacet applies the filter labelled label ("" for every step).
func (p *Timeline) setFacet(label string) Intent {
	if label == p.facet {
		return redraw
	}
	if p.facet == "" && p.list.Cursor < p.rows() {
		p.unfilteredAt = p.index(p.list.Cursor) // where esc brings the cursor back
	}
	p.facet = label
	in := p.rebuild(false)
	if label == "" {
		p.backToUnfilteredAt()
		in = p.selectIntent()
	}
	if p.follow {
		p.list.Bottom()
		in = p.selectIntent()
	}
	if p.scan != nil {
		return redraw
	}
	return in
}

// backToUnfilteredAt puts the cursor back on the step it was on before a
// filter was chosen, once every step is listed again.
func (p *Timeline) backToUnfilteredAt() {
	at := p.unfilteredAt
	p.unfilteredAt = -1
	if at < 0 || p.filtered() || at >= p.rows() || p.scan != nil {
		return
	}
	p.list.Select(at)
	p.afterMove()
	if p.list.AtBottom() && p.live {
		p.follow = true
	}
}

// pickerView is the picker's rows for the pane's body.
func (p *Timeline) pickerView(t *Theme, focused bool, w, h int) []string {
	km := p.env.Keys
	body := []string{t.Muted.Render(textfmt.Cut(fmt.Sprintf(" show only: %s choose · %s · %s leaves it as it was",
		km.Up.Help().Key+"/"+km.Down.Help().Key, km.Open.Help().Key, km.Back.Help().Key), w))}
	pk := p.picker
	rows := max(h-1, 1)
	from := max(min(pk.cursor-rows/2, len(pk.labels)-rows), 0)
	for i := from; i < len(pk.labels) && i < from+rows; i++ {
		label := pk.labels[i]
		if label == "" {
			label = "every step"
		}
		line := "  " + sanitize.Line(label)
		if label == p.facet || (pk.labels[i] == "" && p.facet == "") {
			line += "  (now)"
		}
		if i == pk.cursor {
			body = append(body, selectStyle(t, focused).Render(textfmt.Fit(line, w)))
		} else {
			body = append(body, t.Text.Render(textfmt.Cut(line, w)))
		}
	}
	return body
}
