package views

// Reading the step pane pauses the timeline's following: a live run must
// not pull the step out from under the person reading it. The pause is the
// timeline's own follow turned off, as a move in the timeline does; the
// title says why until follow is on again (f, in either pane).

// PauseFollow stops following because the step pane is being read. It
// reports whether the timeline was following.
func (p *Timeline) PauseFollow() bool {
	if !p.follow {
		return false
	}
	p.bump()
	p.follow = false
	p.pausedRun = p.runID
	return true
}

// ResumeFollow follows the newest step again (f in the step pane).
func (p *Timeline) ResumeFollow() Intent {
	p.bump()
	p.follow, p.fresh, p.pausedRun = true, 0, ""
	p.list.Bottom()
	return p.selectIntent()
}

// paused reports whether following is paused for reading this agent's step.
func (p *Timeline) paused() bool { return !p.follow && p.pausedRun != "" && p.pausedRun == p.runID }

// pausedNote is the title's word for it.
func (p *Timeline) pausedNote() string {
	return "paused while you read · " + p.env.Keys.Follow.Help().Key + " follows"
}

// PausedNote is what the step pane's title says while the timeline's
// following is paused for reading ("" when it is not).
func (p *Timeline) PausedNote() string {
	if !p.paused() {
		return ""
	}
	return "following paused · " + p.env.Keys.Follow.Help().Key + " follows"
}
