package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// state is everything vigil knows about the store, kept in memory and
// brought up to date from each refresh's Changes in O(changes): the run
// model the command line reads too, and what only the screen needs — the
// open run, its tree events and the shown agent's timeline. It does no IO
// and draws nothing.
type state struct {
	model  *runmodel.Model
	root   string                        // the open run's root
	events map[string][]store.AgentEvent // tree events, for loaded trees
	agent  agentView                     // the agent the timeline and drift show
}

func newState(src store.Source) *state {
	md := runmodel.New(src.RecordsLeases())
	if set, ok := src.(store.StoreSet); ok {
		// Over several stores, each run's liveness is read by its own
		// store's rules: one that records no leases says unknown, not dead.
		md.SetLeaseRecorder(set.RecordsLeasesOf)
	}
	return &state{model: md, events: map[string][]store.AgentEvent{}}
}

// changed says what a refresh touched, so the model redraws only that.
// Counts (steps and tokens counted, leases renewed) change with every
// commit and may be shown a moment late; runs (a run started, ended or
// changed state) and requests may not.
type changed struct {
	runmodel.Changed
	steps, samples bool
	grown          grown // the shown agent's steps a refresh folded
	// reopen is the agent to show again: its store was loaded again alone
	// (Changes.Reloaded), so what the timeline and tree hold of it is void.
	reopen string
}

// apply folds one refresh into the state.
func (s *state) apply(ch *store.Changes, now time.Time) changed {
	c := changed{Changed: s.model.Apply(ch, now)}
	if len(ch.Reloaded) > 0 {
		c.reopen = s.dropReloaded(ch.Reloaded)
	}
	c.steps, c.grown, c.samples = s.agent.apply(ch)
	for _, e := range ch.AgentEvents {
		if _, loaded := s.events[e.RunID]; loaded || s.inOpenTree(e.RunID) {
			s.events[e.RunID] = append(s.events[e.RunID], e)
			c.Tree = true
		}
	}
	return c
}

// inOpenTree reports whether a run belongs to the open run's tree.
func (s *state) inOpenTree(id string) bool {
	return s.root != "" && s.model.RootOf(id) == s.root
}

// dropReloaded forgets the tree events of the stores loaded again and, if
// the open run is in one, the agent view: it returns the agent to show
// again (the one shown, else its root, if either is still there).
func (s *state) dropReloaded(prefixes []string) string {
	in := func(id string) bool {
		p, _, ok := strings.Cut(id, "/")
		return ok && slices.Contains(prefixes, p)
	}
	for id := range s.events {
		if in(id) {
			delete(s.events, id)
		}
	}
	if s.root == "" || !in(s.root) {
		return ""
	}
	shown, root := s.agent.id, s.root
	s.agent, s.root = agentView{}, ""
	for _, id := range []string{shown, root} {
		if _, ok := s.model.Run(id); ok && id != "" {
			return id
		}
	}
	return ""
}
