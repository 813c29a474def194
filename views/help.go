package views

import (
	"strings"

	"github.com/vigil-run/vigil/keymap"
)

// Help draws the help overlay, generated from the keymap: one titled
// column per group of bindings, in a frame sized to fit w×h.
func Help(t *Theme, km keymap.KeyMap, w, h int) string {
	type entry struct{ k, desc string }
	var cols [][]string
	for _, g := range km.Groups() {
		var es []entry
		kw := 0
		for _, b := range g.Bindings {
			hb := b.Help()
			es = append(es, entry{hb.Key, hb.Desc})
			kw = max(kw, cellWidth(hb.Key))
		}
		col := []string{t.TitleFocus.Render(g.Title)}
		for _, e := range es {
			col = append(col, t.Key.Render(PadRight(e.k, kw))+"  "+t.Text.Render(e.desc))
		}
		cols = append(cols, col)
	}
	// Lay the columns out left to right, wrapping to a new band when the
	// width runs out.
	var lines []string
	inner := min(w-6, 110)
	var band [][]string
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
				widths[i] = max(widths[i], cellWidth(l))
			}
		}
		for r := 0; r < rows; r++ {
			var b strings.Builder
			for i, c := range band {
				cell := ""
				if r < len(c) {
					cell = c[r]
				}
				b.WriteString(Fit(cell, widths[i]))
				b.WriteString("    ")
			}
			lines = append(lines, strings.TrimRight(b.String(), " "))
		}
		lines = append(lines, "")
		band, bandW = nil, 0
	}
	for _, c := range cols {
		cw := 0
		for _, l := range c {
			cw = max(cw, cellWidth(l))
		}
		if bandW+cw > inner {
			flush()
		}
		band = append(band, c)
		bandW += cw + 4
	}
	flush()
	lines = append(lines, t.Muted.Render("Approving and denying ask for y to confirm; keys are ignored for a moment"),
		t.Muted.Render("after a new request appears. Mouse: click to focus and select, wheel to scroll."),
		"", t.Muted.Render("press ? or esc to close"))
	boxW := 0
	for _, l := range lines {
		boxW = max(boxW, cellWidth(l))
	}
	boxW = min(boxW+4, w)
	boxH := min(len(lines)+2, h)
	body := make([]string, 0, len(lines))
	for _, l := range lines {
		body = append(body, " "+l)
	}
	return t.Frame("Help · keys", "vigil", body, boxW, boxH, true)
}
