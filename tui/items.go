package tui

import (
	"sort"
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// refreshItems rebuilds what the runs, tree and approval panes list from
// the run model: O(runs) once the model's sums are up to date, done only
// when runs, requests or leases changed, or once a second for the clock.
func (m *Model) refreshItems() {
	now := m.now()
	m.itemsAt = now
	md := m.st.model
	roots := md.Roots()
	items := make([]views.RunItem, 0, len(roots))
	set, _ := m.src.Source.(store.StoreSet)
	for _, id := range roots {
		r, _ := md.Run(id)
		it := views.RunItem{Run: r, State: md.State(id, now), Agents: md.Agents(id), Tree: md.Tree(id), Waiting: md.TreeWaiting(id)}
		it.Duration, _ = md.Duration(id, now)
		if set != nil {
			if st, ok := set.StoreOf(id); ok {
				it.Store, it.StoreOffline = st.Prefix, st.Offline != ""
			}
		}
		items = append(items, it)
	}
	m.runs.SetItems(items)
	m.refreshTree()
	m.refreshApprovals()
	m.showSummary() // its state, lease and ages move with the clock too
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
	now := m.now()
	ids := md.Subtree(root)
	nodes := make(map[string]*views.AgentNode, len(ids))
	for _, id := range ids {
		r, _ := md.Run(id)
		nodes[id] = &views.AgentNode{Run: r, State: md.State(id, now), Own: md.Agent(id), Waiting: md.Waiting(id),
			Marked: md.TreeWaiting(id) > 0}
		m.nodeExtras(nodes[id])
	}
	refusals := map[string][]store.AgentEvent{}
	var budget *views.Budget
	var draws []store.AgentEvent
	for _, id := range ids {
		for _, e := range m.st.events[id] {
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
	m.tree.SetTree(views.FlattenTree(root, nodes, md.Children, refusals, m.queued()), budget)
	m.tree.SetLive(m.doings())
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
	m.approvals.SetItems(items, now)
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
