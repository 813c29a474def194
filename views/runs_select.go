package views

// SelectRun puts the cursor on a root run, if the list shows it (a filter
// may hide it); it reports whether it did.
func (p *Runs) SelectRun(id string) bool {
	for i := range p.shown {
		if p.item(i).Run.ID == id {
			p.bump()
			p.list.Select(i)
			p.selected = id
			return true
		}
	}
	return false
}
