package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// refreshItems rebuilds what the runs, tree and approval panes list from
// the state. It walks the runs once: O(runs), done only when runs,
// requests or leases changed, or once a second for the clock.
func (m *Model) refreshItems() {
	now := m.now()
	m.itemsAt = now
	waiting := m.st.waitingIn()
	items := make([]views.RunItem, 0, len(m.st.roots))
	for _, id := range m.st.roots {
		r := m.st.runs[id]
		it := views.RunItem{Run: *r, Known: true}
		for _, mid := range m.st.treeIDs(id) {
			mr := m.st.runs[mid]
			it.Agents++
			it.Steps += mr.Steps
			it.Tokens += mr.Tokens
			it.Known = it.Known && mr.StatsKnown
			it.Waiting += waiting[mid]
		}
		it.State = m.st.stateOf(r, it.Waiting > 0, now)
		switch {
		case r.Summary != nil && r.Summary.HasDuration:
			it.Duration = r.Summary.Duration
		case (it.State == store.StateRunning || it.State == store.StateWaiting) && !r.StartedAt.IsZero():
			it.Duration = now.Sub(r.StartedAt)
		}
		items = append(items, it)
	}
	m.runs.SetItems(items)
	m.refreshTree()
	m.refreshApprovals()
}

// refreshTree rebuilds the open run's tree: states, waiting marks carried
// up to every ancestor, spawn refusals and the shared budget.
func (m *Model) refreshTree() {
	root := m.st.root
	if root == "" || m.st.runs[root] == nil {
		m.tree.SetTree(nil, nil)
		return
	}
	now := m.now()
	waiting := m.st.waitingIn()
	ids := m.st.treeIDs(root)
	nodes := make(map[string]*views.AgentNode, len(ids))
	for _, id := range ids {
		r := m.st.runs[id]
		nodes[id] = &views.AgentNode{Run: *r, Waiting: waiting[id], Marked: waiting[id] > 0}
	}
	// Carry each waiting mark up to the root.
	for _, id := range ids {
		if waiting[id] == 0 {
			continue
		}
		seen := map[string]bool{}
		for p := m.st.runs[id].ParentID; p != "" && !seen[p]; p = m.st.runs[p].ParentID {
			seen[p] = true
			n := nodes[p]
			if n == nil {
				break
			}
			n.Marked = true
		}
	}
	for id, n := range nodes {
		n.State = m.st.stateOf(m.st.runs[id], n.Waiting > 0, now)
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
	m.tree.SetTree(views.FlattenTree(root, nodes, m.st.kids, refusals), budget)
}

// refreshApprovals lists every undecided request in the store, oldest
// first, each with the asking agent's chain and whether it can be decided.
func (m *Model) refreshApprovals() {
	now := m.now()
	reqs := make([]*request, 0, len(m.st.requests))
	for _, r := range m.st.requests {
		reqs = append(reqs, r)
	}
	sort.Slice(reqs, func(i, j int) bool {
		a, b := reqs[i], reqs[j]
		if !a.firstSeen.Equal(b.firstSeen) {
			return a.firstSeen.Before(b.firstSeen)
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return store.IDNumber(a.ID) < store.IDNumber(b.ID)
	})
	items := make([]views.ApprovalItem, 0, len(reqs))
	for _, r := range reqs {
		it := views.ApprovalItem{Req: r.Request, FirstSeen: r.firstSeen, Asker: m.asker(r.RunID)}
		run := m.st.runs[r.RunID]
		if run == nil {
			it.Delivery, it.Why = store.Closed, fmt.Sprintf("run %s is not in the store", r.RunID)
		} else {
			it.Delivery, it.Why = m.src.Classify(r.Request, *run, m.st.effectiveLease(run), now)
		}
		items = append(items, it)
	}
	m.approvals.SetItems(items, now)
}

// asker names the chain of agents from the root down to a run.
func (m *Model) asker(id string) string {
	parents := make(map[string]string, 8)
	seen := map[string]bool{}
	for cur := id; cur != "" && !seen[cur]; {
		seen[cur] = true
		r := m.st.runs[cur]
		if r == nil {
			break
		}
		parents[cur] = r.ParentID
		cur = r.ParentID
	}
	chain := store.Ancestry(id, parents)
	parts := make([]string, 0, len(chain))
	for i, c := range chain {
		label := "#" + sanitize.Line(store.DisplayID(c))
		if r := m.st.runs[c]; r != nil && (i == len(chain)-1 || len(chain) <= 2) {
			label += " " + views.Cut(firstLine(r.Goal), 18)
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
