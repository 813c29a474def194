package runmodel

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Over several stores, a running run with no lease is crashed where its
// store records leases and unknown where it does not: each by its own
// store's rules, not the set's one flag.
func TestLeaseRecorderPerStore(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := New(true)
	m.SetLeaseRecorder(func(id string) bool { return strings.HasPrefix(id, "leased/") })
	m.SetRuns([]store.Run{
		{ID: "leased/1", Status: store.StatusRunning, StartedAt: now},
		{ID: "journal/1", Status: store.StatusRunning, StartedAt: now},
	})
	if st := m.State("leased/1", now); st != store.StateCrashed {
		t.Errorf("leased/1: %v; want crashed (its store records leases and it holds none)", st)
	}
	if st := m.State("journal/1", now); st != store.StateUnknown {
		t.Errorf("journal/1: %v; want unknown (its store records no leases)", st)
	}
	if l := m.Liveness("journal/1", now); l != store.LivenessUnknown {
		t.Errorf("journal/1 liveness %v; want unknown", l)
	}
}
