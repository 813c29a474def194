package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// Help is the help overlay, generated from the keymap: one titled column
// per group of bindings, in a box laid out when the screen is sized.
type Help struct {
	env        *Env
	lines      []styledLine
	boxW, boxH int
	offset     int // the first line shown: a short screen scrolls the help
}

// NewHelp makes the overlay; it is laid out by SetSize.
func NewHelp(env *Env) *Help { return &Help{env: env} }

// SetSize lays the overlay out to fit within w×h.
func (p *Help) SetSize(w, h int) {
	km := p.env.Keys
	var cols [][]styledLine
	for _, g := range km.Groups() {
		kw := 0
		for _, b := range g.Bindings {
			kw = max(kw, textfmt.Width(b.Help().Key))
		}
		col := []styledLine{one(roleHeading, g.Title)}
		for _, b := range g.Bindings {
			hb := b.Help()
			col = append(col, styledLine{{roleKey, textfmt.PadRight(hb.Key, kw)}, {plain, "  "}, {roleText, hb.Desc}})
		}
		cols = append(cols, col)
	}
	textW := min(w-6, 110)
	lines := bands(cols, textW)
	for _, l := range wrap(fmt.Sprintf("Approving and denying ask for %s to confirm; keys are ignored for a moment "+
		"after a new request appears. Mouse: click to focus and select, wheel to scroll.", km.Confirm.Help().Key), min(textW, 80)) {
		lines = append(lines, one(roleMuted, l))
	}
	for _, l := range wrap(glyphLegend(), min(textW, 80)) {
		lines = append(lines, one(roleMuted, l))
	}
	for _, l := range wrap(statusLegend(km.Pane[5].Help().Key), min(textW, 80)) {
		lines = append(lines, one(roleMuted, l))
	}
	lines = append(lines, one(plain, ""),
		one(roleMuted, fmt.Sprintf("press %s, %s or %s to close", km.Help.Help().Key, km.Quit.Help().Key, km.Back.Help().Key)))
	boxW := 0
	for _, l := range lines {
		boxW = max(boxW, l.width())
	}
	p.lines = lines
	p.boxW, p.boxH = min(boxW+4, w), min(len(lines)+2, h)
	p.offset = max(0, min(p.offset, len(p.lines)-p.height()))
}

// height is how many lines the box shows.
func (p *Help) height() int { return max(p.boxH-2, 1) }

// Key scrolls the help where the screen is too short for all of it.
func (p *Help) Key(msg tea.KeyPressMsg) {
	km := p.env.Keys
	switch {
	case key.Matches(msg, km.Up):
		p.Wheel(-1)
	case key.Matches(msg, km.Down):
		p.Wheel(1)
	case key.Matches(msg, km.PageUp):
		p.Wheel(-max(p.height()-1, 1))
	case key.Matches(msg, km.PageDown):
		p.Wheel(max(p.height()-1, 1))
	case key.Matches(msg, km.Top):
		p.offset = 0
	case key.Matches(msg, km.Bottom):
		p.Wheel(len(p.lines))
	}
}

// Wheel scrolls by d lines.
func (p *Help) Wheel(d int) {
	p.offset = max(0, min(p.offset+d, len(p.lines)-p.height()))
}

// Size is the overlay's box, borders included.
func (p *Help) Size() (w, h int) { return p.boxW, p.boxH }

// View draws the overlay at its size.
func (p *Help) View() string {
	t := p.env.Theme
	end := min(p.offset+p.height(), len(p.lines))
	body := make([]string, 0, end-p.offset)
	for _, l := range p.lines[p.offset:end] {
		body = append(body, " "+l.render(t))
	}
	note := "vigil"
	if len(p.lines) > p.height() {
		km := p.env.Keys
		note = fmt.Sprintf("%d–%d of %d · %s/%s", p.offset+1, end, len(p.lines), km.Down.Help().Key, km.PageDown.Help().Key)
	}
	sb := Scrollbar{Rows: p.height(), From: p.offset, To: end, Total: len(p.lines)}
	return t.FrameScroll("Help · keys", note, body, p.boxW, p.boxH, true, sb)
}

// bands lays columns out left to right, starting a new band of columns
// below when the width runs out; each band ends with a blank line.
func bands(cols [][]styledLine, w int) []styledLine {
	var lines []styledLine
	var band [][]styledLine
	bandW := 0
	flush := func() {
		if len(band) == 0 {
			return
		}
		rows := 0
		widths := make([]int, len(band))
		for i, c := range band {
			rows = max(rows, len(c))
			for _, l := range c {
				widths[i] = max(widths[i], l.width())
			}
		}
		for r := 0; r < rows; r++ {
			var line styledLine
			for i, c := range band {
				var cell styledLine
				if r < len(c) {
					cell = c[r]
				}
				line = append(line, cell...)
				line = append(line, span{plain, strings.Repeat(" ", widths[i]-cell.width()) + "    "})
			}
			lines = append(lines, trimRight(line))
		}
		lines = append(lines, one(plain, ""))
		band, bandW = nil, 0
	}
	for _, c := range cols {
		cw := 0
		for _, l := range c {
			cw = max(cw, l.width())
		}
		if bandW+cw > w {
			flush()
		}
		band = append(band, c)
		bandW += cw + 4
	}
	flush()
	return lines
}

// trimRight drops the padding at a line's end.
func trimRight(l styledLine) styledLine {
	for len(l) > 0 && l[len(l)-1].role == plain {
		last := strings.TrimRight(l[len(l)-1].text, " ")
		if last != "" {
			l[len(l)-1].text = last
			break
		}
		l = l[:len(l)-1]
	}
	return l
}

// hints draws bindings as the keys offered in a footer: "a approve  d deny  ".
func (t *Theme) hints(bs []key.Binding) string {
	var b strings.Builder
	for _, kb := range bs {
		h := kb.Help()
		b.WriteString(t.Key.Render(h.Key) + t.Muted.Render(" "+h.Desc+"  "))
	}
	return b.String()
}
