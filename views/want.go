package views

// The rows a pane would fill, borders included, so the layout can give a
// pane that holds little less than its share (tui/fit.go).

// WantRows is the runs pane's rows: its header, every run, the filter line.
func (p *Runs) WantRows() int { return 3 + max(len(p.shown), 1) + boolInt(p.filterLine()) }

// WantRows is the tree's rows: its header, every line, the live strip.
func (p *Tree) WantRows() int {
	strip := 0
	if len(p.live) > 0 {
		strip = min(len(p.live), maxStripRows)
	}
	return 2 + p.headerRows() + max(len(p.lines), 1) + strip
}

// WantRows is the queue's rows: as many as it can get while requests wait
// (their content scrolls), else its one line and the last decision's.
func (p *Approvals) WantRows() int {
	if len(p.items) > 0 {
		return 1 << 20
	}
	rows := 3
	if p.status != "" {
		rows += 1 + len(wrap(p.status, max(p.w-2, 1)))
	}
	return rows
}
