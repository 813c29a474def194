package runmodel

import (
	"sort"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// A store of a set loaded again alone: the model drops its runs and
// requests and takes the ones that came, a run without counts to be
// counted; the other store's runs, counts and requests stay as they were.
func TestReloadedStoreAlone(t *testing.T) {
	m := modelOf(t, counted(run("a/1", "", 0), 3, 30), counted(run("b/1", "", 1), 5, 50), run("b/2", "b/1", 2))
	m.SetRequests([]store.Request{
		{Kind: store.Approval, ID: "a/1", RunID: "a/1"},
		{Kind: store.Approval, ID: "b/1", RunID: "b/2"},
	}, t0)
	fresh := run("b/1", "", 5)
	fresh.StatsKnown = false
	c := m.Apply(&store.Changes{Reloaded: []string{"b"}, Runs: []store.Run{fresh, counted(run("b/7", "", 6), 1, 10)},
		Requests: []store.Request{{Kind: store.Question, ID: "b/3", RunID: "b/7"}}}, t0)
	var ids []string
	for _, id := range m.Roots() {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	equal(t, "roots", ids, []string{"a/1", "b/1", "b/7"})
	if _, ok := m.Run("b/2"); ok {
		t.Error("b/2, gone from the reloaded store, is still held")
	}
	if r, _ := m.Run("a/1"); r.Steps != 3 || r.Tokens != 30 {
		t.Errorf("a/1 after b was reloaded: %+v", r)
	}
	if r, _ := m.Run("b/1"); r.StatsKnown || !r.StartedAt.Equal(fresh.StartedAt) {
		t.Errorf("b/1 is not the reloaded row: %+v", r)
	}
	equal(t, "recount", c.Recount, []string{"b/1"})
	var keys []string
	for _, q := range m.Requests() {
		keys = append(keys, q.Key().String())
	}
	sort.Strings(keys)
	equal(t, "requests", keys, []string{"approval a/1", "question b/3"})
}
