package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// AgentNode is one agent of a tree as the tree pane shows it.
type AgentNode struct {
	Run     store.Run
	State   store.State
	Waiting int  // requests this agent waits on
	Marked  bool // it or an agent below it waits on a human
}

// TreeLine is one line of the drawn tree: an agent, or a spawn refusal
// under the agent that tried.
type TreeLine struct {
	Guide   string // the ├─ │  └─ drawing in front
	Node    *AgentNode
	Refusal *store.AgentEvent
}

// Budget is a tree's shared token ceiling, learnt from its budget draws.
type Budget struct {
	Ceiling, Remaining int64
}

// FlattenTree lays a tree out as lines, parents before children, refusals
// after the children of the agent that was refused. A cycle or a tree
// deeper than maxDepth stops rather than loops.
func FlattenTree(root string, nodes map[string]*AgentNode, children map[string][]string, refusals map[string][]store.AgentEvent) []TreeLine {
	const maxDepth = 64
	var out []TreeLine
	seen := map[string]bool{}
	var walk func(id, prefix string, last, top bool, depth int)
	walk = func(id, prefix string, last, top bool, depth int) {
		n, ok := nodes[id]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		guide, childPrefix := "", ""
		if !top {
			guide, childPrefix = prefix+"├─ ", prefix+"│  "
			if last {
				guide, childPrefix = prefix+"└─ ", prefix+"   "
			}
		}
		out = append(out, TreeLine{Guide: guide, Node: n})
		if depth >= maxDepth {
			return
		}
		kids := children[id]
		refs := refusals[id]
		for i, k := range kids {
			walk(k, childPrefix, i == len(kids)-1 && len(refs) == 0, false, depth+1)
		}
		for i := range refs {
			g := childPrefix + "├─ "
			if i == len(refs)-1 {
				g = childPrefix + "└─ "
			}
			out = append(out, TreeLine{Guide: g, Refusal: &refs[i]})
		}
	}
	walk(root, "", true, true, 0)
	return out
}

// Tree is the agent tree pane.
type Tree struct {
	env      *Env
	w, h     int
	list     List
	lines    []TreeLine
	budget   *Budget
	selected string
}

// NewTree makes an empty tree pane.
func NewTree(env *Env) *Tree { return &Tree{env: env} }

// SetSize lays the pane out for w×h.
func (p *Tree) SetSize(w, h int) {
	p.w, p.h = w, h
	p.list.SetHeight(max(h-2, 1))
}

// Focus is a no-op: the tree has nothing to arm.
func (p *Tree) Focus() {}

// Capturing is false: the tree takes no typed text.
func (p *Tree) Capturing() bool { return false }

// SetTree replaces the tree, keeping the cursor on the same agent.
func (p *Tree) SetTree(lines []TreeLine, budget *Budget) {
	p.lines, p.budget = lines, budget
	p.list.SetLen(len(lines))
	for i, l := range lines {
		if l.Node != nil && l.Node.Run.ID == p.selected {
			p.list.Select(i)
			return
		}
	}
	p.list.Top()
	p.remember()
}

// Selected is the agent under the cursor ("" when none).
func (p *Tree) Selected() string { return p.selected }

// Select puts the cursor on an agent.
func (p *Tree) Select(id string) {
	p.selected = id
	p.SetTree(p.lines, p.budget)
}

func (p *Tree) remember() {
	if p.list.Cursor < len(p.lines) && p.lines[p.list.Cursor].Node != nil {
		p.selected = p.lines[p.list.Cursor].Node.Run.ID
	}
}

// Key moves through the tree; moving onto another agent selects it.
func (p *Tree) Key(msg tea.KeyPressMsg) Intent {
	km := p.env.Keys
	before := p.selected
	if !moveList(&p.list, msg, km) && !key.Matches(msg, km.Open) {
		return Intent{}
	}
	p.remember()
	if p.selected != before || key.Matches(msg, km.Open) {
		return Intent{Kind: SelectAgent, ID: p.selected}
	}
	return redraw
}

// Click selects the agent clicked.
func (p *Tree) Click(x, y int) Intent {
	if !p.list.SelectVisible(y - 1) { // the top border
		return Intent{}
	}
	p.remember()
	return Intent{Kind: SelectAgent, ID: p.selected}
}

// Wheel moves the window by d rows.
func (p *Tree) Wheel(d int) Intent {
	p.list.Scroll(d)
	return redraw
}

// View draws the pane.
func (p *Tree) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	var body []string
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.line(t, p.lines[i], i == p.list.Cursor, focused, inner))
	}
	if len(p.lines) == 0 {
		body = append(body, t.Muted.Render("  open a run to see its agents"))
	}
	note := ""
	if n := p.agents(); n > 0 {
		note = countNote(n, n, "agent")
	}
	if p.budget != nil {
		note = fmt.Sprintf("budget %s/%s left · %s", Tokens(p.budget.Remaining), Tokens(p.budget.Ceiling), note)
	}
	return t.Frame("2 Agents", note, body, w, h, focused)
}

func (p *Tree) agents() int {
	n := 0
	for _, l := range p.lines {
		if l.Node != nil {
			n++
		}
	}
	return n
}

func (p *Tree) line(t *Theme, l TreeLine, selected, focused bool, w int) string {
	// A deep tree keeps only its last levels of guides, so the agent itself
	// stays readable: "⋯ │  └─ ".
	g := l.Guide
	if r := []rune(g); len(r) > max(w/3, 12) {
		g = "⋯" + string(r[len(r)-9:])
	}
	guide := t.Faint.Render(g)
	gw := cellWidth(g)
	if l.Refusal != nil {
		text := fmt.Sprintf("✗ spawn refused (%s) · step %d", sanitize.Line(l.Refusal.Detail), l.Refusal.Step)
		return guide + t.Bad.Render(Cut(text, w-gw))
	}
	n := l.Node
	st := t.StateStyle(n.State, n.Run.Outcome)
	glyph := StateGlyph(n.State, n.Run.Outcome)
	// Right-hand facts in fixed columns, dropped from the least needed as
	// the pane narrows.
	var right []string
	var styles []func(...string) string
	if w >= 48 {
		right, styles = append(right, PadRight(StateLabel(n.State, n.Run.Outcome), 12)), append(styles, st.Render)
	}
	if w >= 60 {
		steps := ""
		if n.Run.StatsKnown {
			steps = Thousands(int64(n.Run.Steps)) + " st"
		}
		right, styles = append(right, PadLeft(steps, 7)), append(styles, t.Muted.Render)
	}
	if w >= 36 {
		tokens := "…"
		if n.Run.StatsKnown {
			tokens = Tokens(n.Run.Tokens)
		}
		right, styles = append(right, PadLeft(tokens, 6)), append(styles, t.Muted.Render)
	}
	mark := ""
	if n.Marked {
		mark = "◆"
		if n.Waiting > 0 {
			mark = fmt.Sprintf("◆%d", n.Waiting)
		}
	}
	right, styles = append(right, PadRight(mark, 3)), append(styles, t.Waiting.Render)
	rightW := 0
	for _, r := range right {
		rightW += cellWidth(r) + 1
	}
	head := glyph + " #" + sanitize.Line(store.DisplayID(n.Run.ID)) + " "
	goalW := max(w-gw-cellWidth(head)-rightW, 4)
	goal := PadRight(sanitize.Line(n.Run.Goal), goalW)
	if selected {
		return guide + selectStyle(t, focused).Render(Fit(head+goal+" "+strings.Join(right, " "), w-gw))
	}
	var b strings.Builder
	b.WriteString(guide + st.Render(glyph) + t.Text.Render(strings.TrimPrefix(head, glyph)+goal))
	for i, r := range right {
		b.WriteString(" " + styles[i](r))
	}
	return b.String()
}
