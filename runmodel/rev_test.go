package runmodel

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Every method that changes the model moves its revision (the explorer's
// tree keeps its drawing until it moves), and every method is known to be
// one that changes it or one that only reads: a method added is classed
// here, or this fails.
func TestEveryChangeMovesTheRevision(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := store.Run{ID: "1", Status: store.StatusRunning, StartedAt: now}
	req := store.Request{Kind: store.Approval, ID: "a", RunID: "1"}
	changes := map[string]func(m *Model){
		"SetLeaseRecorder": func(m *Model) { m.SetLeaseRecorder(func(string) bool { return true }) },
		"SetRecordsLeases": func(m *Model) { m.SetRecordsLeases(!m.RecordsLeases()) },
		"SetRuns":          func(m *Model) { m.SetRuns([]store.Run{run}) },
		"SetRequests":      func(m *Model) { m.SetRequests([]store.Request{req}, now) },
		"ApplyStats":       func(m *Model) { m.ApplyStats(map[string]store.RunStats{"1": {Steps: 3}}) },
		"Apply":            func(m *Model) { m.Apply(&store.Changes{Runs: []store.Run{run}}, now) },
		"Decided":          func(m *Model) { m.Decided(req.Key()) },
	}
	reads := []string{"Agent", "Agents", "Ancestry", "Children", "Delivery", "Duration", "EachRequest", "Lease", "Len", "Liveness",
		"Newest", "Parent", "Pending", "Read", "RecordsLeases", "Requests", "Rev", "RootOf", "Roots", "Run", "Shape", "State",
		"Subtree", "Tree", "TreeWaiting", "Under", "Unknown", "Waiting", "Within"}
	typ := reflect.TypeOf(&Model{})
	for i := 0; i < typ.NumMethod(); i++ {
		name := typ.Method(i).Name
		if _, ok := changes[name]; !ok && !slices.Contains(reads, name) {
			t.Errorf("Model.%s is classed neither as a change nor as a read", name)
		}
	}
	for name, change := range changes {
		m := New(true)
		m.SetRuns([]store.Run{run})
		m.SetRequests([]store.Request{req}, now)
		before := m.Rev()
		change(m)
		if m.Rev() == before {
			t.Errorf("%s left the revision where it was", name)
		}
	}
}
