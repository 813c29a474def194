package runmodel

import (
	"testing"

	"github.com/vigil-run/vigil/store"
)

// io-harness's resume (src/run.rs) drives a step-capped run again with its
// status left completed: the source re-sends it without the old summary,
// and the model counts its steps again instead of keeping the summary's.
func TestReopenedRunIsRecounted(t *testing.T) {
	capped := store.Run{ID: "1", Status: store.StatusCompleted, Outcome: store.OutcomeStepCapReached, Resumable: true, StartedAt: t0,
		Summary: &store.Summary{Outcome: store.OutcomeStepCapReached, Steps: 3, Tokens: 300}, Steps: 3, Tokens: 300, StatsKnown: true}
	m := modelOf(t, capped)
	if got := m.State("1", t0); got != store.StateFinished {
		t.Fatalf("before: %v", got)
	}
	reopened := capped
	reopened.Summary, reopened.Steps, reopened.Tokens, reopened.StatsKnown = nil, 0, 0, false
	reopened.Lease = liveLease()
	c := m.Apply(&store.Changes{Runs: []store.Run{reopened}}, t0)
	equal(t, "recount", c.Recount, []string{"1"})
	if m.Agent("1").Known {
		t.Fatal("the summary's counts are kept for a reopened run")
	}
	if got := m.State("1", t0); got != store.StateRunning {
		t.Errorf("after: %v", got)
	}
	// Rows that land before the recount are held, then added past it.
	m.Apply(&store.Changes{Steps: []store.StepRow{{RowID: 40, RunID: "1", Number: 5, Tokens: 50}}}, t0)
	m.ApplyStats(map[string]store.RunStats{"1": {Steps: 4, Tokens: 400, Through: 30}})
	if got := m.Agent("1"); got != (Counts{5, 450, true, 0}) {
		t.Errorf("recounted = %+v, want 5 steps, 450 tokens", got)
	}
	// A plain re-read (no summary either side) keeps the counts.
	c = m.Apply(&store.Changes{Runs: []store.Run{reopened}}, t0)
	if len(c.Recount) != 0 || m.Agent("1") != (Counts{5, 450, true, 0}) {
		t.Errorf("a re-read asked for a recount: %+v, %+v", c.Recount, m.Agent("1"))
	}
}

// An orphan (a request a crash resume asked again, tests/attach.rs F7) is
// listed but waits on nobody: not in a run's waiting, its tree's, or the
// store's.
func TestOrphansDoNotWait(t *testing.T) {
	root, child := run("1", "", 0), run("2", "1", 1)
	root.Lease = liveLease()
	m := modelOf(t, root, child)
	m.SetRequests([]store.Request{
		{Kind: store.Approval, ID: "1", RunID: "2", Step: 2, Standing: store.StandingOrphaned, StandingReason: "asked again"},
		{Kind: store.Approval, ID: "2", RunID: "2", Step: 2},
	}, t0)
	if m.Waiting("2") != 1 || m.TreeWaiting("1") != 1 || m.Pending() != 1 || len(m.Requests()) != 2 {
		t.Errorf("waiting %d, tree %d, pending %d, listed %d", m.Waiting("2"), m.TreeWaiting("1"), m.Pending(), len(m.Requests()))
	}
	m.Decided(store.RequestKey{Kind: store.Approval, ID: "2"})
	if m.Waiting("2") != 0 || m.State("1", t0) != store.StateRunning {
		t.Errorf("with only the orphan left: waiting %d, state %v", m.Waiting("2"), m.State("1", t0))
	}
}

// A store upgraded under the reader starts recording leases.
func TestRecordsLeasesLearnedLater(t *testing.T) {
	r := run("1", "", 0)
	m := New(false)
	m.SetRuns([]store.Run{r})
	if got := m.State("1", t0); got != store.StateUnknown {
		t.Fatalf("without leases: %v", got)
	}
	m.SetRecordsLeases(true)
	if !m.RecordsLeases() || m.State("1", t0) != store.StateCrashed {
		t.Errorf("with leases and none held: %v", m.State("1", t0))
	}
}
