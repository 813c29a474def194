package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/rev"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// AgentNode is one agent of a tree as the tree pane shows it; its counts
// are its own, not its subtree's.
type AgentNode struct {
	Run     store.Run
	State   store.State
	Own     runmodel.Counts // this agent's steps and tokens
	Waiting int             // requests this agent waits on
	Marked  bool            // it or an agent below it waits on a human

	// What it holds open now, as far as the store records it (zero where
	// it does not): its plan, the messages not yet handed to it, and the
	// processes it started that are still running.
	Todos     []store.Todo
	Unread    int
	Processes int
}

// TreeLine is one line of the drawn tree: an agent, a child queued for a
// slot (it has no run yet), or a spawn refusal under the agent that tried.
type TreeLine struct {
	Guide string // the ├─ │  └─ drawing in front
	// Agent is the run id of an agent's line. Its Node is made when the
	// line is drawn or searched (Tree.SetNodes), unless given here.
	Agent   string
	Node    *AgentNode
	Queued  *store.QueuedAgent
	Refusal *store.AgentEvent
}

// Budget is a tree's shared token ceiling, learnt from its budget draws.
type Budget struct {
	Ceiling, Remaining int64
}

// FlattenTree lays a tree out as lines, parents before children; after an
// agent's children come the children queued under it, then the spawns it
// was refused. A cycle or a tree deeper than maxDepth stops rather than
// loops.
func FlattenTree(root string, nodes map[string]*AgentNode, children func(id string) []string, refusals map[string][]store.AgentEvent,
	queued map[string][]store.QueuedAgent) []TreeLine {
	lines := FlattenTreeOf(root, len(nodes), func(id string) bool { return nodes[id] != nil }, children, refusals, queued)
	for i := range lines {
		if lines[i].Agent != "" {
			lines[i].Node = nodes[lines[i].Agent]
		}
	}
	return lines
}

// FlattenTreeOf is FlattenTree with the agents' lines left without their
// nodes (has says which agents the tree holds): the pane makes a node only
// for a line it draws (Tree.SetNodes), so a tree of 100 k agents costs 100
// k short lines, not 100 k nodes, on each refresh. agents is how many the
// tree holds (or 0 when not known): the lines and the walk's own record are
// sized once, not grown 100 k times.
func FlattenTreeOf(root string, agents int, has func(id string) bool, children func(id string) []string, refusals map[string][]store.AgentEvent,
	queued map[string][]store.QueuedAgent) []TreeLine {
	const maxDepth = 64
	out := make([]TreeLine, 0, agents)
	seen := make(map[string]bool, agents)
	var walk func(id, prefix string, last, top bool, depth int)
	walk = func(id, prefix string, last, top bool, depth int) {
		if seen[id] || !has(id) {
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
		out = append(out, TreeLine{Guide: guide, Agent: id})
		if depth >= maxDepth {
			return
		}
		kids := children(id)
		refs, waits := refusals[id], queued[id]
		for i, k := range kids {
			walk(k, childPrefix, i == len(kids)-1 && len(refs)+len(waits) == 0, false, depth+1)
		}
		branch := func(last bool) string {
			if last {
				return childPrefix + "└─ "
			}
			return childPrefix + "├─ "
		}
		for i := range waits {
			out = append(out, TreeLine{Guide: branch(i == len(waits)-1 && len(refs) == 0), Queued: &waits[i]})
		}
		for i := range refs {
			out = append(out, TreeLine{Guide: branch(i == len(refs)-1), Refusal: &refs[i]})
		}
	}
	walk(root, "", true, true, 0)
	return out
}

// Tree is the agent tree pane.
type Tree struct {
	revision // bumped by every change to what it draws (revision.go)

	env      *Env
	w, h     int
	list     List
	lines    []TreeLine
	budget   *Budget
	selected string
	live     []Doing // what its agents are doing now, from their live streams
	search   Search

	nodes     Nodes    // makes the node of a line that has none (SetNodes)
	nodesSeen rev.Seen // the revision of the nodes last drawn from (Rev)

	stripPeak int    // the most rows the live strip has wanted in this tree (want.go)
	peakRoot  string // the tree it was counted in

	memo treeLines // the agents' lines of the last frame (tree_lines.go)
}

// NewTree makes an empty tree pane.
func NewTree(env *Env) *Tree { return &Tree{env: env, search: newSearch(env)} }

// Nodes makes the node of an agent's line that carries none (FlattenTreeOf):
// as it is drawn, from the model as it is then; nil for an agent no longer
// held. Its Rev moves whenever a node it makes may have.
type Nodes interface {
	Node(id string) *AgentNode
	Revised
}

// SetNodes says how the node of an agent's line is made when the line
// carries none.
func (p *Tree) SetNodes(n Nodes) {
	p.bump()
	p.nodes = n
}

// Rev is the pane's revision, moved too when the nodes it draws moved.
func (p *Tree) Rev() uint64 {
	p.track(&p.nodesSeen, p.nodes)
	return p.revision.Rev()
}

// node is the agent's node of a line (nil for a line of another kind, or
// an agent no longer held).
func (p *Tree) node(l TreeLine) *AgentNode {
	if l.Node != nil || l.Agent == "" || p.nodes == nil {
		return l.Node
	}
	return p.nodes.Node(l.Agent)
}

// lineText is a line's text as the search reads it.
func (p *Tree) lineText(i int) string {
	l := p.lines[i]
	switch n := p.node(l); {
	case n != nil:
		return "#" + store.DisplayID(n.Run.ID) + " " + sanitize.Line(n.Run.Goal) + " " + StateLabel(n.State, n.Run.Outcome)
	case l.Queued != nil:
		return "queued: " + sanitize.Line(l.Queued.Goal)
	case l.Refusal != nil:
		return "spawn refused (" + sanitize.Line(l.Refusal.Detail) + ")"
	}
	return ""
}

// SetSize lays the pane out for w×h.
func (p *Tree) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.list.SetHeight(max(h-2-p.headerRows()-p.stripRows(), 1))
}

// stripRows is how many rows the live strip takes: none while it has
// nothing to say or the pane has no room beside two agents; else one per
// agent doing something (at most maxStripRows) where the tree leaves rows
// spare, and one row for all of them where it does not.
func (p *Tree) stripRows() int {
	avail := p.h - 2 - p.headerRows()
	if len(p.live) == 0 || avail < 3 {
		return 0
	}
	spare := avail - len(p.lines)
	return max(1, min(len(p.live), maxStripRows, spare, avail-2))
}

// maxStripRows bounds the live strip.
const maxStripRows = 3

// SetLive replaces what the strip says the agents are doing now.
func (p *Tree) SetLive(ds []Doing) {
	p.bump()
	p.live = ds
	p.noteStrip()
	p.SetSize(p.w, p.h)
}

// headerRows is 1 when the pane is wide enough to show counts: then a
// header row says whose counts they are.
func (p *Tree) headerRows() int {
	if p.w-2 >= agentColumns[len(agentColumns)-1].minW {
		return 1
	}
	return 0
}

// Focus is a no-op: the tree has nothing to arm.
func (p *Tree) Focus() {}

// Capturing reports whether the search is taking typed text.
func (p *Tree) Capturing() bool { return p.search.Typing() }

// SetTree replaces the tree, keeping the cursor on the same agent.
func (p *Tree) SetTree(lines []TreeLine, budget *Budget) {
	p.bump()
	p.lines, p.budget = lines, budget
	p.noteStrip()
	p.list.SetLen(len(lines))
	p.search.Index(len(lines), p.lineText)
	for i, l := range lines {
		if l.Agent != "" && l.Agent == p.selected {
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
	p.bump()
	p.selected = id
	p.SetTree(p.lines, p.budget)
}

func (p *Tree) remember() {
	if p.list.Cursor < len(p.lines) && p.lines[p.list.Cursor].Agent != "" {
		p.selected = p.lines[p.list.Cursor].Agent
	}
}

// Key moves through the tree; moving onto another agent selects it.
func (p *Tree) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km := p.env.Keys
	before := p.selected
	dir := 0
	switch p.search.Key(msg, p.env) {
	case searchKept:
		return redraw
	case searchMoved:
		dir = p.search.Dir(msg, p.env)
		fallthrough
	case searchChanged:
		return p.toMatch(dir)
	}
	if !moveList(&p.list, msg, km) && !key.Matches(msg, km.Open) {
		return Intent{}
	}
	p.remember()
	if p.selected != before || key.Matches(msg, km.Open) {
		return Intent{Kind: SelectAgent, ID: p.selected}
	}
	return redraw
}

// toMatch moves to the match dir away (0: the first from the cursor).
func (p *Tree) toMatch(dir int) Intent {
	before := p.selected
	p.search.Index(len(p.lines), p.lineText)
	if i, ok := p.search.Target(p.list.Cursor, dir); ok {
		p.list.Select(i)
	}
	p.remember()
	if p.selected != before {
		return Intent{Kind: SelectAgent, ID: p.selected}
	}
	return redraw
}

// Paste adds to the search being typed.
func (p *Tree) Paste(text string) Intent {
	p.bump()
	if !p.search.Paste(text) {
		return Intent{}
	}
	return p.toMatch(0)
}

// Click selects the agent clicked.
func (p *Tree) Click(x, y int) Intent {
	p.bump()
	if !p.list.SelectVisible(y - 1 - p.headerRows()) { // the top border and the header
		return Intent{}
	}
	p.remember()
	return Intent{Kind: SelectAgent, ID: p.selected}
}

// Wheel moves the window by d rows.
func (p *Tree) Wheel(d int) Intent {
	p.bump()
	p.list.Scroll(d)
	return redraw
}

// View draws the pane.
func (p *Tree) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	var body []string
	if p.headerRows() > 0 && len(p.lines) > 0 {
		body = append(body, t.Muted.Render(agentHeader(inner)))
	}
	from, to := p.list.Visible()
	p.memo.frame()
	for i := from; i < to; i++ {
		body = append(body, p.search.Highlight(t, p.memoLine(t, p.lines[i], i == p.list.Cursor, focused, inner)))
	}
	if len(p.lines) == 0 {
		body = append(body, t.Muted.Render("  open a run to see its agents"))
	}
	if rows := p.stripRows(); rows > 0 {
		for len(body) < p.h-2-rows {
			body = append(body, "")
		}
		body = append(body, p.strip(t, inner, rows)...)
	}
	note := ""
	if n := p.agents(); n > 0 {
		note = countNote(n, n, "agent")
	}
	if p.budget != nil {
		note = fmt.Sprintf("budget %s/%s left · %s", textfmt.Tokens(p.budget.Remaining), textfmt.Tokens(p.budget.Ceiling), note)
	}
	if s := p.search.Note(p.env, p.list.Cursor); s != "" {
		note = fitNote("2 Agents", w, []string{s, note})
	}
	top := 0
	if p.headerRows() > 0 && len(p.lines) > 0 {
		top = 1
	}
	return t.FrameScroll("2 Agents", note, body, w, h, focused, ListScrollbar(&p.list, top))
}

// nodeBadges mark what an agent holds open: its plan's progress, messages
// not yet handed to it, and processes it started that still run.
func nodeBadges(n *AgentNode) string {
	var parts []string
	if len(n.Todos) > 0 {
		done := 0
		for _, t := range n.Todos {
			if t.State == store.TodoDone {
				done++
			}
		}
		parts = append(parts, fmt.Sprintf("☑%d/%d", done, len(n.Todos)))
	}
	if n.Unread > 0 {
		parts = append(parts, fmt.Sprintf("✉%d", n.Unread))
	}
	if n.Processes > 0 {
		parts = append(parts, fmt.Sprintf("⚙%d", n.Processes))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + " "
}

// strip is the live lines under the tree: what each agent is doing inside
// the step it has not committed yet, the selected agent first; one agent a
// row, or all of them on one row when there is only one.
func (p *Tree) strip(t *Theme, w, rows int) []string {
	now := p.env.Now()
	parts := make([]string, 0, len(p.live))
	for _, d := range p.live {
		if d.RunID == p.selected {
			parts = append([]string{d.line(now)}, parts...)
		} else {
			parts = append(parts, d.line(now))
		}
	}
	if rows == 1 {
		return []string{t.Good.Render(textfmt.Cut(" now  "+strings.Join(parts, "   "), w))}
	}
	out := make([]string, 0, rows)
	for i := 0; i < rows && i < len(parts); i++ {
		lead := "      "
		if i == 0 {
			lead = " now  "
		}
		text := parts[i]
		if i == rows-1 && len(parts) > rows {
			text += fmt.Sprintf("   +%d more", len(parts)-rows)
		}
		out = append(out, t.Good.Render(textfmt.Cut(lead+text, w)))
	}
	return out
}

func (p *Tree) agents() int {
	n := 0
	for _, l := range p.lines {
		if l.Agent != "" {
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
	gw := textfmt.Width(g)
	if l.Refusal != nil {
		text := fmt.Sprintf("✗ spawn refused (%s) · step %d", sanitize.Line(l.Refusal.Detail), l.Refusal.Step)
		return guide + t.Bad.Render(textfmt.Cut(text, w-gw))
	}
	if q := l.Queued; q != nil {
		text := fmt.Sprintf("⧗ queued: %s · no run yet (step %d)", sanitize.Line(q.Goal), q.Step)
		return guide + t.Stale.Render(textfmt.Cut(text, w-gw))
	}
	n := p.node(l)
	if n == nil {
		return guide // an agent the model let go of since the tree was laid out
	}
	st := t.StateStyle(n.State, n.Run.Outcome)
	glyph := StateGlyph(n.State, n.Run.Outcome)
	var right []string
	var styles []func(...string) string
	for _, c := range visibleAgentColumns(w) {
		var cell string
		style := t.Muted.Render
		switch c.title {
		case "STATE":
			cell, style = StateLabel(n.State, n.Run.Outcome), st.Render
		case "STEPS":
			if n.Own.Known {
				cell = textfmt.Thousands(int64(n.Own.Steps)) + " st"
			}
		case "TOKENS":
			cell = "…"
			if n.Own.Known {
				cell = textfmt.TokensPart(n.Own.Tokens, n.Own.Unreported, c.width)
			}
		}
		if c.right {
			cell = textfmt.PadLeft(cell, c.width)
		} else {
			cell = textfmt.PadRight(cell, c.width)
		}
		right, styles = append(right, cell), append(styles, style)
	}
	mark := ""
	if n.Marked {
		mark = "◆"
		if n.Waiting > 0 {
			mark = fmt.Sprintf("◆%d", n.Waiting)
		}
	}
	right, styles = append(right, textfmt.PadRight(mark, markWidth)), append(styles, t.Waiting.Render)
	rightW := 0
	for _, r := range right {
		rightW += textfmt.Width(r) + 1
	}
	head := glyph + " #" + sanitize.Line(store.DisplayID(n.Run.ID)) + " "
	badges := nodeBadges(n)
	goalW := max(w-gw-textfmt.Width(head)-textfmt.Width(badges)-rightW, 4)
	goal := textfmt.PadRight(sanitize.Line(n.Run.Goal), goalW)
	if selected {
		return guide + selectStyle(t, focused).Render(textfmt.Fit(head+badges+goal+" "+strings.Join(right, " "), w-gw))
	}
	var b strings.Builder
	b.WriteString(guide + st.Render(glyph) + t.Text.Render(strings.TrimPrefix(head, glyph)) + t.Waiting.Render(badges) + t.Text.Render(goal))
	for i, r := range right {
		b.WriteString(" " + styles[i](r))
	}
	return b.String()
}

// agentColumns are the facts right of each agent's goal, in fixed columns,
// dropped from the least needed as the pane narrows (minW is the inner
// width from which one is shown). The counts are the agent's own.
var agentColumns = []column{
	{"STATE", 12, false, 48, false},
	{"STEPS", 7, true, 60, false},
	{"TOKENS", 6, true, 36, false},
}

// markWidth is the waiting mark's column, always shown: ◆2.
const markWidth = 3

func visibleAgentColumns(w int) []column {
	var cols []column
	for _, c := range agentColumns {
		if w >= c.minW {
			cols = append(cols, c)
		}
	}
	return cols
}

// agentHeader titles the count columns over the tree's lines, tagged as
// each agent's own. The state needs no title: its words say what they are.
func agentHeader(w int) string {
	cols := visibleAgentColumns(w)
	rightW := markWidth + 1
	for _, c := range cols {
		rightW += c.width + 1
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", max(w-rightW, 0)))
	scoped := -1
	for _, c := range cols {
		b.WriteByte(' ')
		title := c.title
		if title == "STATE" {
			title = ""
		} else if scoped < 0 {
			scoped = textfmt.Width(b.String())
		}
		if c.right {
			b.WriteString(textfmt.PadLeft(title, c.width))
		} else {
			b.WriteString(textfmt.PadRight(title, c.width))
		}
	}
	return scopeTag(b.String(), scoped, AgentScope)
}
