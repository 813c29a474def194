package tui

import "github.com/vigil-run/vigil/views"

// pane names a pane; its number key is pane+1.
type pane int

const (
	paneRuns pane = iota
	paneAgents
	paneTimeline
	paneStep
	paneDrift
	paneApprovals
	paneCount
)

// up is where back (esc) goes from each pane: one step up the path
// runs → agents → timeline → step.
var up = [paneCount]pane{
	paneRuns:      paneRuns,
	paneAgents:    paneRuns,
	paneTimeline:  paneAgents,
	paneStep:      paneTimeline,
	paneDrift:     paneTimeline,
	paneApprovals: paneRuns,
}

// newPanes makes the six panes around the shared environment. The model
// keeps each under its own type, to hand it data, and all of them in one
// array indexed by pane, to size, route input to and draw them alike.
func (m *Model) newPanes() {
	env := m.env
	m.runs, m.tree, m.timeline = views.NewRuns(env), views.NewTree(env), views.NewTimeline(env)
	m.tree.SetNodes(m.agentNode)
	m.detail, m.drift, m.approvals = views.NewDetail(env), views.NewDrift(env), views.NewApprovals(env)
	m.panes = [paneCount]views.Pane{
		paneRuns:      m.runs,
		paneAgents:    m.tree,
		paneTimeline:  m.timeline,
		paneStep:      m.detail,
		paneDrift:     m.drift,
		paneApprovals: m.approvals,
	}
	m.helpBox = views.NewHelp(env)
	m.summary = views.NewSummary(env)
}
