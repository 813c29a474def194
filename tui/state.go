package tui

import (
	"slices"
	"sort"
	"time"

	"github.com/vigil-run/vigil/store"
)

// state is everything vigil knows about the store, kept in memory and
// brought up to date from each refresh's Changes in O(changes). It does no
// IO and draws nothing.
type state struct {
	runs          map[string]*store.Run
	kids          map[string][]string // parent → children, oldest first
	roots         []string            // newest first
	recordsLeases bool

	// Steps and tokens of runs without a summary are counted by RunStats;
	// rows that arrive while a count is on its way wait in pendingStats
	// and are added only if the count did not include them.
	statsThrough map[string]int64
	pendingStats map[string][]store.StepRow

	requests map[store.RequestKey]*request
	events   map[string][]store.AgentEvent // tree events, for loaded trees
	leased   map[string]bool               // runs holding a lease now

	root, agent string       // the open run's root and the agent shown
	steps       []store.Step // the agent's timeline
	stepsRow    int64        // the highest step row folded into steps
	samples     []store.ContextSample
	agentLoaded bool
	calls       map[int]map[int64]store.ProviderCall // the agent's provider attempts by step, by row: they time its steps
}

// request is an undecided request and when vigil first saw it (approvals
// carry no time of their own).
type request struct {
	store.Request
	firstSeen time.Time
}

func newState() *state {
	return &state{runs: map[string]*store.Run{}, kids: map[string][]string{}, statsThrough: map[string]int64{},
		pendingStats: map[string][]store.StepRow{}, requests: map[store.RequestKey]*request{},
		events: map[string][]store.AgentEvent{}}
}

// setRuns loads the whole run list.
func (s *state) setRuns(runs []store.Run) {
	s.runs = make(map[string]*store.Run, len(runs))
	s.leased = map[string]bool{}
	for i := range runs {
		r := runs[i]
		s.runs[r.ID] = &r
		if r.Lease != nil {
			s.leased[r.ID] = true
		}
		if r.StatsKnown {
			s.statsThrough[r.ID] = 1<<62 - 1
		}
	}
	s.relink()
}

// relink rebuilds the parent/child index.
func (s *state) relink() {
	s.kids = map[string][]string{}
	s.roots = s.roots[:0]
	for id, r := range s.runs {
		if r.ParentID == "" || s.runs[r.ParentID] == nil {
			s.roots = append(s.roots, id)
			continue
		}
		s.kids[r.ParentID] = append(s.kids[r.ParentID], id)
	}
	for _, k := range s.kids {
		s.sortIDs(k, false)
	}
	s.breakCycles()
	s.sortIDs(s.roots, true)
}

// breakCycles makes runs reachable from no root (parent_run_id loops, in a
// damaged store) show up anyway: the smallest id of each loop becomes a
// root, cut from the parent that closes the loop.
func (s *state) breakCycles() {
	seen := make(map[string]bool, len(s.runs))
	for _, r := range s.roots {
		for _, id := range s.treeIDs(r) {
			seen[id] = true
		}
	}
	if len(seen) == len(s.runs) {
		return
	}
	ids := make([]string, 0, len(s.runs)-len(seen))
	for id := range s.runs {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	s.sortIDs(ids, false)
	for _, id := range ids {
		if seen[id] {
			continue
		}
		// Climb until a run repeats: it is on the loop.
		path := map[string]bool{}
		cur := id
		for !path[cur] {
			path[cur] = true
			cur = s.runs[cur].ParentID
		}
		head := cur
		for p := s.runs[cur].ParentID; p != cur; p = s.runs[p].ParentID {
			if store.IDNumber(p) < store.IDNumber(head) {
				head = p
			}
		}
		parent := s.runs[head].ParentID
		s.kids[parent] = slices.DeleteFunc(s.kids[parent], func(k string) bool { return k == head })
		s.roots = append(s.roots, head)
		for _, t := range s.treeIDs(head) {
			seen[t] = true
		}
	}
}

// sortIDs orders runs by age: start time, then numeric id, then id text
// (formats whose ids are not numbers, like Starweaver's, rely on the time).
func (s *state) sortIDs(ids []string, newestFirst bool) {
	older := func(a, b string) bool {
		// A run with no start time counts as oldest, so the order is total.
		ra, rb := s.runs[a], s.runs[b]
		if ra != nil && rb != nil && !ra.StartedAt.Equal(rb.StartedAt) {
			return ra.StartedAt.Before(rb.StartedAt)
		}
		if na, nb := store.IDNumber(a), store.IDNumber(b); na != nb {
			return na < nb
		}
		return a < b
	}
	sort.SliceStable(ids, func(i, j int) bool {
		if newestFirst {
			return older(ids[j], ids[i])
		}
		return older(ids[i], ids[j])
	})
}

// setRequests loads the undecided requests.
func (s *state) setRequests(reqs []store.Request, now time.Time) {
	s.requests = map[store.RequestKey]*request{}
	for _, r := range reqs {
		if !r.Resolved {
			s.requests[r.Key()] = &request{Request: r, firstSeen: firstSeen(r, now)}
		}
	}
}

func firstSeen(r store.Request, now time.Time) time.Time {
	if !r.AskedAt.IsZero() && r.AskedAt.Before(now) {
		return r.AskedAt
	}
	return now
}

// applyStats takes a RunStats count.
func (s *state) applyStats(stats map[string]store.RunStats) {
	for id, st := range stats {
		r := s.runs[id]
		if r == nil || r.Summary != nil {
			continue
		}
		r.Steps, r.Tokens, r.StatsKnown = st.Steps, st.Tokens, true
		s.statsThrough[id] = st.Through
		for _, row := range s.pendingStats[id] {
			s.countRow(r, row)
		}
		delete(s.pendingStats, id)
	}
}

func (s *state) countRow(r *store.Run, row store.StepRow) {
	if row.RowID <= s.statsThrough[r.ID] {
		return
	}
	r.Tokens += row.Tokens
	r.Steps = max(r.Steps, row.Number)
	s.statsThrough[r.ID] = row.RowID
}

// changed says what a refresh touched, so the model redraws only that.
// counts (steps and tokens counted, leases renewed) change with every
// commit and may be shown a moment late; runs (a run started, ended or
// changed state) and requests may not.
type changed struct {
	runs, counts, requests, tree, steps, samples bool
	recount                                      []string // runs whose counts must be read again (RunStats)
}

// apply folds one refresh into the state.
func (s *state) apply(ch *store.Changes, now time.Time) changed {
	var c changed
	for _, r := range ch.Runs {
		r := r
		old := s.runs[r.ID]
		switch {
		case old != nil && r.Summary == nil && old.Summary != nil:
			// The summary our counts came from no longer holds (a resume
			// reopened the run): count its steps again.
			r.StatsKnown = false
			delete(s.statsThrough, r.ID)
			delete(s.pendingStats, r.ID)
			c.recount = append(c.recount, r.ID)
		case old != nil && r.Summary == nil:
			// A row re-read for a status change carries no counts: keep ours.
			r.Steps, r.Tokens, r.StatsKnown = old.Steps, old.Tokens, old.StatsKnown
		}
		if old != nil && r.Lease == nil {
			r.Lease = old.Lease
		}
		if r.Summary != nil {
			s.statsThrough[r.ID] = 1<<62 - 1
		} else if old == nil {
			// A run born after the cursor: every step it has will come
			// through Changes, so it starts counted at zero.
			r.StatsKnown = true
			s.statsThrough[r.ID] = 0
		}
		s.runs[r.ID] = &r
		c.runs = true
		if old == nil || old.ParentID != r.ParentID {
			c.tree = true
		}
	}
	if c.tree {
		s.relink()
	}
	if ch.LeasesChanged {
		// Only runs that held a lease or hold one now: O(leases), not O(runs).
		for id := range s.leased {
			if r := s.runs[id]; r != nil {
				r.Lease = nil
			}
		}
		s.leased = make(map[string]bool, len(ch.Leases))
		for id, l := range ch.Leases {
			if r := s.runs[id]; r != nil {
				l := l
				r.Lease = &l
				s.leased[id] = true
			}
		}
		c.counts = true
	}
	before := len(s.steps)
	for _, row := range ch.Steps {
		r := s.runs[row.RunID]
		if r == nil {
			continue
		}
		if !r.StatsKnown {
			s.pendingStats[r.ID] = append(s.pendingStats[r.ID], row)
		} else if r.Summary == nil {
			s.countRow(r, row)
			c.counts = true
		}
		if row.RunID == s.agent && s.agentLoaded && row.RowID > s.stepsRow {
			s.steps = store.AppendStepRows(s.steps, []store.StepRow{row})
			s.stepsRow = row.RowID
			c.steps = true
		}
	}
	timed := map[int]bool{}
	for _, pc := range ch.Calls {
		if pc.RunID == s.agent && s.agentLoaded {
			s.addCall(pc)
			timed[pc.Step] = true
			c.steps = true
		}
	}
	if c.steps {
		// A pending step completed in place counts as appended too.
		s.stampTail(timed, len(s.steps)-before+1)
	}
	for _, cs := range ch.Context {
		if cs.RunID != s.agent || !s.agentLoaded {
			continue
		}
		s.upsertSample(cs)
		c.samples = true
	}
	for _, e := range ch.AgentEvents {
		if _, loaded := s.events[e.RunID]; loaded || s.inOpenTree(e.RunID) {
			s.events[e.RunID] = append(s.events[e.RunID], e)
			c.tree = true
		}
	}
	for _, r := range ch.Requests {
		if r.Resolved {
			if _, ok := s.requests[r.Key()]; ok {
				delete(s.requests, r.Key())
				c.requests = true
			}
			continue
		}
		if known, ok := s.requests[r.Key()]; ok {
			known.Request = r // a source may re-send a request with more to say
		} else {
			s.requests[r.Key()] = &request{Request: r, firstSeen: firstSeen(r, now)}
		}
		c.requests = true
	}
	return c
}

// addCall records a provider attempt once, whichever way it arrived.
func (s *state) addCall(pc store.ProviderCall) {
	if s.calls[pc.Step] == nil {
		s.calls[pc.Step] = map[int64]store.ProviderCall{}
	}
	s.calls[pc.Step][pc.RowID] = pc
}

// stampTail re-times the steps appended by a refresh (their calls often
// come first) and the steps whose calls just arrived, from the attempts
// recorded for them. It walks back from the end only as far as it must.
func (s *state) stampTail(timed map[int]bool, appended int) {
	lowest := int(^uint(0) >> 1)
	for n := range timed {
		lowest = min(lowest, n)
	}
	for i := len(s.steps) - 1; i >= 0; i-- {
		st := &s.steps[i]
		fresh := i >= len(s.steps)-appended
		if !fresh && st.Number < lowest {
			break
		}
		if !fresh && !timed[st.Number] {
			continue
		}
		st.At, st.Latency = time.Time{}, 0
		for _, pc := range s.calls[st.Number] {
			if pc.At.After(st.At) {
				st.At = pc.At
			}
			st.Latency += time.Duration(pc.LatencyMS) * time.Millisecond
		}
	}
}

func (s *state) upsertSample(cs store.ContextSample) {
	for i := len(s.samples) - 1; i >= 0 && i >= len(s.samples)-16; i-- {
		if s.samples[i].RowID == cs.RowID {
			s.samples[i] = cs
			return
		}
	}
	if n := len(s.samples); n > 0 && cs.RowID < s.samples[n-1].RowID {
		return // already loaded with the agent
	}
	s.samples = append(s.samples, cs)
}

// inOpenTree reports whether a run belongs to the open run's tree.
func (s *state) inOpenTree(id string) bool {
	return s.root != "" && s.rootOf(id) == s.root
}

// rootOf walks up to a run's root (a cycle stops at the first repeat).
func (s *state) rootOf(id string) string {
	seen := map[string]bool{}
	for {
		r := s.runs[id]
		if r == nil || r.ParentID == "" || s.runs[r.ParentID] == nil || seen[id] {
			return id
		}
		seen[id] = true
		id = r.ParentID
	}
}

// treeIDs is a run and everything below it, parents first.
func (s *state) treeIDs(root string) []string { return store.Subtree(root, s.kids) }

// setAgent shows an agent: its steps, context samples and provider calls.
func (s *state) setAgent(id string, steps []store.Step, samples []store.ContextSample, calls []store.ProviderCall) {
	s.agent, s.steps, s.samples, s.agentLoaded = id, steps, samples, true
	s.calls = map[int]map[int64]store.ProviderCall{}
	for _, pc := range calls {
		s.addCall(pc)
	}
	s.stepsRow = 0
	for _, st := range steps {
		s.stepsRow = max(s.stepsRow, st.RowID)
		for _, r := range st.Retries {
			s.stepsRow = max(s.stepsRow, r.RowID)
		}
	}
}

// waitingIn counts the requests each run waits on: undecided, and not an
// orphan nobody reads (store.Request.Waits).
func (s *state) waitingIn() map[string]int {
	out := map[string]int{}
	for _, r := range s.requests {
		if r.Waits() {
			out[r.RunID]++
		}
	}
	return out
}

// waitingCount is how many requests wait on a human in the whole store.
func (s *state) waitingCount() int {
	n := 0
	for _, r := range s.requests {
		if r.Waits() {
			n++
		}
	}
	return n
}

// effectiveLease is a run's own lease or its nearest ancestor's.
func (s *state) effectiveLease(r *store.Run) *store.Lease {
	byID := make(map[string]store.Run, 8)
	seen := map[string]bool{}
	for cur := r; cur != nil && !seen[cur.ID]; cur = s.runs[cur.ParentID] {
		seen[cur.ID] = true
		byID[cur.ID] = *cur
		if cur.ParentID == "" {
			break
		}
	}
	return store.EffectiveLease(*r, byID)
}

// stateOf tells a run's state now.
func (s *state) stateOf(r *store.Run, waiting bool, now time.Time) store.State {
	return store.StateOf(*r, s.effectiveLease(r), s.recordsLeases, waiting, now)
}
