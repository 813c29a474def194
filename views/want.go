package views

// The rows a pane would fill, borders included, so the layout can give a
// pane that holds little less than its share (tui/fit.go).

// WantRows is the runs pane's rows: its header, every run (the filter
// hides some, but the pane keeps its size while one types), the filter line.
func (p *Runs) WantRows() int { return 3 + max(len(p.all), 1) + boolInt(p.filterLine()) }

// WantRows is the tree's rows: its header, every line, and the most rows
// the live strip has taken in this tree (the strip comes and goes as the
// agents work: the layout does not jump with it).
func (p *Tree) WantRows() int {
	return 2 + p.headerRows() + max(len(p.lines), 1) + p.stripPeak
}

// noteStrip remembers the most rows the live strip wanted in this tree.
func (p *Tree) noteStrip() {
	root := ""
	if len(p.lines) > 0 && p.lines[0].Agent != "" {
		root = p.lines[0].Agent
	}
	if root != p.peakRoot {
		p.peakRoot, p.stripPeak = root, 0
	}
	p.stripPeak = max(p.stripPeak, min(len(p.live), maxStripRows))
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
