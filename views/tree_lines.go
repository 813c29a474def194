package views

import (
	"github.com/vigil-run/vigil/internal/textfmt"

	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// A commit moves one agent's counts, yet the tree was drawn line by line
// again on every frame of every vigil serve session that shows it: the
// largest part of drawing a frame under the 50-session bench (the agents
// tree 12 % of the server's CPU). An agent's line follows from what is in
// treeLineKey alone, so a line drawn in the frame before with the same key
// is reused; lines of other kinds (queued, refused) are rare and drawn as
// they are.

// treeLineKey is everything an agent's line is drawn from.
type treeLineKey struct {
	theme             *Theme
	guide             string
	w                 int
	selected, focused bool
	id, goal          string
	state             store.State
	outcome           store.Outcome
	own               runmodel.Counts
	waiting           int
	marked            bool
	badges            string
}

// CheckTreeLines draws every line the memo gives again and panics if the
// two differ: an input treeLineKey does not know of. tui's tests turn it on.
var CheckTreeLines = false

// sharedTreeLines is the lines drawn lately by any tree of this process: a
// commit moves the same line in every vigil serve session that shows it,
// and sessions that draw alike share their theme (NewThemeFor), so one of
// them draws it. Small: a frame's own lines are kept by its tree.
var sharedTreeLines = textfmt.Memo[treeLineKey, string]{Cap: 512}

// treeLines is the lines drawn in the last frame and in this one.
type treeLines = keptDrawings[treeLineKey]

func (p *Tree) memoLine(t *Theme, l TreeLine, selected, focused bool, w int) string {
	n := p.node(l)
	if n == nil || l.Queued != nil || l.Refusal != nil {
		return p.line(t, l, selected, focused, w)
	}
	k := treeLineKey{theme: t, guide: l.Guide, w: w, selected: selected, focused: focused,
		id: n.Run.ID, goal: n.Run.Goal, state: n.State, outcome: n.Run.Outcome, own: n.Own,
		waiting: n.Waiting, marked: n.Marked, badges: nodeBadges(n)}
	return p.memo.get(k, &sharedTreeLines, CheckTreeLines, "tree line", func() string {
		return p.line(t, l, selected, focused, w)
	})
}
