package tui

import (
	"github.com/vigil-run/vigil/internal/rev"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/views"
)

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
	m.tree.SetNodes(&treeNodes{m: m})
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

// treeNodes makes the nodes of the tree's lines from the run model as it
// is when they are drawn.
type treeNodes struct {
	m     *Model
	model *runmodel.Model // the model last seen, at its revision at
	at    uint64
	rev   rev.Rev
}

func (n *treeNodes) Node(id string) *views.AgentNode { return n.m.agentNode(id) }

// Rev moves with the run model's: a node is what the model says of its
// agent. A model read again from the store counts its revisions afresh, so
// another model is a move too. (What the open tree's agents hold open, also
// on their nodes, is handed to the tree again whenever it moves:
// refreshTree.)
func (n *treeNodes) Rev() uint64 {
	if md := n.m.st.model; md != n.model || md.Rev() != n.at {
		n.model, n.at = md, md.Rev()
		n.rev.Bump()
	}
	return n.rev.Rev()
}
