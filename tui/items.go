package tui

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// refreshItems rebuilds what the runs, tree and approval panes list from
// the run model: O(runs) once the model's sums are up to date, done only
// when runs, requests or leases changed (the clock's tick reads again only
// the rows it moves: onClock).
func (m *Model) refreshItems() {
	now := m.now()
	m.itemsAt = now
	md := m.st.model
	roots := md.Roots()
	// The runs pane's own array is filled again (it reads it only in
	// SetItems): 20 k roots are 6 MB a refresh, and a burst of commits
	// asks for one every countsEvery.
	items := slices.Grow(m.runItems[:0], len(roots))
	clocked := m.built.clocked[:0]
	set, _ := m.src.Source.(store.StoreSet)
	m.itemsOffline = offlineStores(set)
	for _, id := range roots {
		rd, _ := md.Read(id, now)
		m.rowReads++
		if !rd.Run.Ended() {
			clocked = append(clocked, int32(len(items)))
		}
		it := views.RunItem{Run: rd.Run, State: rd.State, Agents: rd.Agents, Tree: rd.Tree, Waiting: rd.TreeWaiting, Duration: rd.Duration}
		if set != nil {
			if st, ok := set.StoreOf(id); ok {
				it.Store, it.StoreOffline = st.Prefix, st.Offline != ""
			}
		}
		items = append(items, it)
	}
	m.runItems = items
	m.built = itemsBuilt{model: md, rev: md.Rev(), clocked: clocked}
	m.runs.SetItems(items)
	m.refreshTree()
	m.refreshApprovals()
	m.showSummary() // its state, lease and ages move with the clock too
}

// offlineStores names the stores of a set that cannot be read now.
func offlineStores(set store.StoreSet) string {
	if set == nil {
		return ""
	}
	var b strings.Builder
	for _, st := range set.Stores() {
		if st.Offline != "" {
			b.WriteString(st.Prefix)
			b.WriteByte(0)
		}
	}
	return b.String()
}

// followOffline rebuilds the lists when a store went offline or came back
// since they were built: a store's state is asked of its link, not sent
// as a change, and its rows must say it at once.
func (m *Model) followOffline() {
	if set, ok := m.src.Source.(store.StoreSet); ok && m.loaded && offlineStores(set) != m.itemsOffline {
		m.refreshItems()
	}
}

// refreshTree rebuilds the open run's tree: states, each agent's own
// counts, waiting marks carried up to every ancestor, spawn refusals and
// the shared budget.
func (m *Model) refreshTree() {
	md, root := m.st.model, m.st.root
	if _, ok := md.Run(root); !ok {
		m.tree.SetTree(nil, nil)
		return
	}
	// Agents' lines only: the pane makes the node of a line it draws
	// (agentNode), so a tree of 100 k agents is not 100 k nodes a refresh.
	has := md.Under(root)
	refusals := map[string][]store.AgentEvent{}
	var budget *views.Budget
	var draws []store.AgentEvent
	// The loaded trees' events (few), not every agent of this one (100 k).
	for id, evs := range m.st.events {
		if len(evs) == 0 || !has(id) { // a loaded tree marks each agent, most with no event
			continue
		}
		for _, e := range evs {
			switch e.Kind {
			case store.AgentSpawnRefused:
				refusals[id] = append(refusals[id], e)
			case store.AgentBudgetDraw:
				if e.Tokens != nil && e.Remaining != nil {
					draws = append(draws, e)
				}
			}
		}
	}
	if len(draws) > 0 {
		sort.Slice(draws, func(i, j int) bool { return draws[i].RowID < draws[j].RowID })
		first, last := draws[0], draws[len(draws)-1]
		budget = &views.Budget{Ceiling: *first.Tokens + *first.Remaining, Remaining: *last.Remaining}
	}
	queued := m.queued()
	// The lines hang on the forest's shape alone while nothing is queued
	// or refused in the tree: a refresh (every second, for the clock) of a
	// tree 100 k wide then lays out nothing again.
	plain := len(refusals) == 0 && len(queued) == 0
	if c := m.treeLines; !plain || c.root != root || c.shape != md.Shape() || c.model != md {
		lines := views.FlattenTreeOf(root, md.Agents(root), has, md.Children, refusals, queued)
		m.treeLines = treeLines{}
		if plain {
			m.treeLines = treeLines{root: root, shape: md.Shape(), model: md, lines: lines}
		}
		m.tree.SetTree(lines, budget)
	} else {
		m.tree.SetTree(c.lines, budget)
	}
	live := m.doings()
	m.tree.SetLive(live)
}

// treeLines are the open tree's lines as last laid out from the model's
// forest of that shape (refreshTree).
type treeLines struct {
	root  string
	shape int
	model *runmodel.Model
	lines []views.TreeLine
}

// agentNode is an agent of the open tree as its line shows it now: state,
// own counts, waiting marks and what it holds open (nil once the model no
// longer holds it).
func (m *Model) agentNode(id string) *views.AgentNode {
	rd, ok := m.st.model.Read(id, m.now())
	if !ok {
		return nil
	}
	n := &views.AgentNode{Run: rd.Run, State: rd.State, Own: rd.Own, Waiting: rd.Waiting, Marked: rd.TreeWaiting > 0}
	m.nodeExtras(n)
	return n
}

// refreshApprovals lists every undecided request in the store, oldest
// first, each with the asking agent's chain and whether it can be decided.
func (m *Model) refreshApprovals() {
	now := m.now()
	md := m.st.model
	reqs := md.Requests()
	items := make([]views.ApprovalItem, 0, len(reqs))
	for _, r := range reqs {
		it := views.ApprovalItem{Req: r.Request, FirstSeen: r.FirstSeen, Asker: m.asker(r.RunID)}
		it.Delivery, it.Why = md.Delivery(m.src, r.Request, now)
		items = append(items, it)
	}
	m.approvals.SetItems(items, now) // the pane says whether that changed it (its Rev)
	m.queue = items
}

// queueMoves reports whether a refresh that only moved counts (steps
// committed, leases renewed, a request's reason reworded) changed whether
// a request in the queue can be decided: the run list and the queue wait for the next rebuild
// (countsEvery) only when it did not. A step committed can orphan the
// request its run asked at it.
func (m *Model) queueMoves(ch *store.Changes, now time.Time) bool {
	if len(m.queue) == 0 {
		return false
	}
	moved := map[string]bool{}
	for _, row := range ch.Steps {
		moved[row.RunID] = true
	}
	for _, q := range ch.Requests {
		moved[q.RunID] = true
	}
	md := m.st.model
	for _, it := range m.queue {
		if !ch.LeasesChanged && !moved[it.Req.RunID] {
			continue
		}
		if d, _ := md.Delivery(m.src, it.Req, now); d != it.Delivery {
			return true
		}
	}
	return false
}

// asker names the chain of agents from the root down to a run.
func (m *Model) asker(id string) string {
	chain := m.st.model.Ancestry(id)
	parts := make([]string, 0, len(chain))
	for i, c := range chain {
		label := "#" + sanitize.Line(store.DisplayID(c))
		if r, ok := m.st.model.Run(c); ok && (i == len(chain)-1 || len(chain) <= 2) {
			label += " " + textfmt.Cut(firstLine(r.Goal), 32)
		}
		parts = append(parts, label)
	}
	return strings.Join(parts, " › ")
}

// firstLine is a goal's first line, made safe to draw.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return sanitize.Line(s)
}
