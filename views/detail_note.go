package views

// SetPausedNote sets what the title says about the timeline's following
// ("" for nothing): the step pane is where the reading that paused it
// happens, and in the compact layout the timeline is not on screen.
func (p *Detail) SetPausedNote(s string) {
	if s != p.pausedNote {
		p.bump()
		p.pausedNote = s
	}
}
