package runmodel

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

func TestCountsByScope(t *testing.T) {
	m := modelOf(t, counted(run("1", "", 0), 4, 400), counted(run("2", "1", 1), 3, 300), counted(run("3", "2", 2), 2, 20),
		counted(run("4", "", 3), 1, 1))
	if got := m.Agent("1"); got != (Counts{4, 400, true, 0}) {
		t.Errorf("agent 1 = %+v", got)
	}
	if got := m.Tree("1"); got != (Counts{9, 720, true, 0}) {
		t.Errorf("tree 1 = %+v", got)
	}
	if got := m.Tree("2"); got != (Counts{5, 320, true, 0}) {
		t.Errorf("tree 2 = %+v", got)
	}
	if got := m.Tree("4"); got != m.Agent("4") {
		t.Errorf("a lone run's tree %+v is not its own %+v", got, m.Agent("4"))
	}

	// One count still on its way makes the tree's unknown, not smaller.
	pending := run("5", "2", 4)
	pending.StatsKnown = false
	m.SetRuns([]store.Run{counted(run("1", "", 0), 4, 400), counted(run("2", "1", 1), 3, 300), pending})
	if m.Tree("1").Known || m.Tree("2").Known || m.Agent("5").Known || !m.Agent("1").Known {
		t.Errorf("unknown counts read as known: tree 1 %+v, tree 2 %+v, agent 5 %+v", m.Tree("1"), m.Tree("2"), m.Agent("5"))
	}
	equal(t, "unknown", m.Unknown(), []string{"5"})
	m.ApplyStats(map[string]store.RunStats{"5": {Steps: 6, Tokens: 60, Through: 10}})
	if got := m.Tree("1"); got != (Counts{13, 760, true, 0}) {
		t.Errorf("tree 1 once counted = %+v", got)
	}
}

func TestStatsBookkeeping(t *testing.T) {
	open := run("1", "", 0)
	open.StatsKnown = false
	m := modelOf(t, open)
	// Rows that land before the count are held, and added only past it.
	m.Apply(&store.Changes{Steps: []store.StepRow{{RowID: 9, RunID: "1", Number: 3, Tokens: 30}, {RowID: 12, RunID: "1", Number: 4, Tokens: 40}}}, t0)
	if m.Agent("1").Known {
		t.Fatal("counted before the count arrived")
	}
	m.ApplyStats(map[string]store.RunStats{"1": {Steps: 3, Tokens: 100, Through: 10}})
	if got := m.Agent("1"); got != (Counts{4, 140, true, 0}) {
		t.Fatalf("after the count = %+v, want 4 steps, 140 tokens (row 9 is in the count, row 12 is not)", got)
	}
	// A row already counted is not counted again; a new one is.
	c := m.Apply(&store.Changes{Steps: []store.StepRow{{RowID: 12, RunID: "1", Number: 4, Tokens: 40}, {RowID: 13, RunID: "1", Number: 5, Tokens: 5}}}, t0)
	if got := m.Agent("1"); got != (Counts{5, 145, true, 0}) || !c.Counts {
		t.Fatalf("after more rows = %+v (%+v)", got, c)
	}
	// A status re-read keeps the counts; a summary replaces them.
	reread := run("1", "", 0)
	reread.StatsKnown = false
	m.Apply(&store.Changes{Runs: []store.Run{reread}}, t0)
	if got := m.Agent("1"); got != (Counts{5, 145, true, 0}) {
		t.Fatalf("a re-read run lost its counts: %+v", got)
	}
	done := counted(run("1", "", 0), 6, 150)
	done.Status, done.Outcome = store.StatusCompleted, store.OutcomeSuccess
	done.Summary = &store.Summary{Outcome: store.OutcomeSuccess, Steps: 6, Tokens: 150}
	m.Apply(&store.Changes{Runs: []store.Run{done}, Steps: []store.StepRow{{RowID: 20, RunID: "1", Number: 7, Tokens: 99}}}, t0)
	if got := m.Agent("1"); got != (Counts{6, 150, true, 0}) {
		t.Fatalf("a finished run's counts are not its summary's: %+v", got)
	}
	// A run born after the cursor starts counted at zero.
	m.Apply(&store.Changes{Runs: []store.Run{{ID: "2", ParentID: "1", Status: store.StatusRunning, StartedAt: t0}},
		Steps: []store.StepRow{{RowID: 21, RunID: "2", Number: 1, Tokens: 7}}}, t0)
	if got := m.Agent("2"); got != (Counts{1, 7, true, 0}) {
		t.Fatalf("a new run = %+v", got)
	}
	if got := m.Tree("1"); got != (Counts{7, 157, true, 0}) {
		t.Fatalf("tree after a new child = %+v", got)
	}
}

func TestApplyIsBookkeepingOnly(t *testing.T) {
	m := modelOf(t, chain(1000)...)
	m.Tree("1")
	m.Lease("1")
	c := m.Apply(&store.Changes{Steps: []store.StepRow{{RowID: 5, RunID: "7", Number: 2, Tokens: 1}}}, t0)
	if !c.Counts || c.Tree || c.Runs {
		t.Fatalf("a step row: %+v", c)
	}
	if m.shapeStale || m.leasesStale || !m.sumsStale {
		t.Fatalf("a step row should stale the sums only: shape %v, leases %v, sums %v", m.shapeStale, m.leasesStale, m.sumsStale)
	}
	m.Apply(&store.Changes{LeasesChanged: true, Leases: map[string]store.Lease{"1": *liveLease()}}, t0)
	if m.shapeStale || !m.leasesStale {
		t.Fatalf("a lease change: shape %v, leases %v", m.shapeStale, m.leasesStale)
	}
}

func TestWaitingAndState(t *testing.T) {
	root := run("1", "", 0)
	root.Lease = liveLease()
	m := modelOf(t, root, run("2", "1", 1), run("3", "2", 2), run("4", "1", 3))
	m.SetRequests([]store.Request{
		{Kind: store.Question, ID: "1", RunID: "3"},
		{Kind: store.Approval, ID: "1", RunID: "3"},
		{Kind: store.Approval, ID: "2", RunID: "9"}, // a run not in the store waits in no tree
		{Kind: store.Plan, ID: "1", RunID: "4", Resolved: true},
	}, t0)
	for id, want := range map[string][2]int{"1": {0, 2}, "2": {0, 2}, "3": {2, 2}, "4": {0, 0}} {
		if got := [2]int{m.Waiting(id), m.TreeWaiting(id)}; got != want {
			t.Errorf("run %s waits %v (own, tree), want %v", id, got, want)
		}
	}
	now := t0.Add(time.Minute)
	// A root reads as its tree does; any other run as itself.
	for id, want := range map[string]store.State{"1": store.StateWaiting, "2": store.StateRunning, "3": store.StateWaiting, "4": store.StateRunning} {
		if got := m.State(id, now); got != want {
			t.Errorf("run %s is %v, want %v", id, got, want)
		}
	}
	if m.Pending() != 3 {
		t.Errorf("%d pending, want 3", m.Pending())
	}
	// Decided, a request waits no more.
	m.Decided(store.RequestKey{Kind: store.Question, ID: "1"})
	m.Apply(&store.Changes{Requests: []store.Request{{Kind: store.Approval, ID: "1", RunID: "3", Resolved: true}}}, now)
	if m.TreeWaiting("1") != 0 || m.State("1", now) != store.StateRunning || m.State("3", now) != store.StateRunning {
		t.Errorf("after the decisions: tree waiting %d, root %v, asker %v", m.TreeWaiting("1"), m.State("1", now), m.State("3", now))
	}
}

func TestLeases(t *testing.T) {
	root := run("1", "", 0)
	root.Lease = liveLease()
	m := modelOf(t, root, run("2", "1", 1), run("3", "2", 2), run("4", "", 3))
	l, holder := m.Lease("3")
	if l != root.Lease || holder != "1" {
		t.Fatalf("grandchild's lease %v held by %q, want the root's", l, holder)
	}
	if l, holder := m.Lease("4"); l != nil || holder != "" || m.Liveness("4", t0) != store.Unleased {
		t.Fatalf("an unleased root: %v %q %v", l, holder, m.Liveness("4", t0))
	}
	if m.Liveness("3", t0.Add(time.Minute)) != store.Live || m.Liveness("3", t0.Add(2*time.Hour)) != store.Lapsed {
		t.Fatal("liveness does not follow the lease's ttl")
	}
	// The lease table moves to another run.
	m.Apply(&store.Changes{LeasesChanged: true, Leases: map[string]store.Lease{"2": *liveLease()}}, t0)
	if l, holder := m.Lease("3"); l == nil || holder != "2" {
		t.Fatalf("after the move the grandchild's lease is %v held by %q", l, holder)
	}
	if l, _ := m.Lease("1"); l != nil {
		t.Fatal("the root kept a lease it gave up")
	}
	if New(false).Liveness("x", t0) != store.LivenessUnknown {
		t.Fatal("a store without leases tells liveness")
	}
}

func TestDuration(t *testing.T) {
	done := run("1", "", 0)
	done.Status, done.Outcome = store.StatusCompleted, store.OutcomeSuccess
	done.Summary = &store.Summary{Outcome: store.OutcomeSuccess, Duration: 4 * time.Minute, HasDuration: true}
	live := run("2", "", 10)
	live.Lease = liveLease()
	parked := run("3", "", 12)
	parked.Status = store.StatusPaused
	m := modelOf(t, done, live, parked)
	now := t0.Add(20 * time.Minute)
	if d, ok := m.Duration("1", now); !ok || d != 4*time.Minute {
		t.Errorf("finished: %v %v", d, ok)
	}
	if d, ok := m.Duration("2", now); !ok || d != 10*time.Minute {
		t.Errorf("running: %v %v", d, ok)
	}
	if _, ok := m.Duration("3", now); ok {
		t.Error("a paused run has a duration")
	}
}

func TestDeliveryAndRequests(t *testing.T) {
	root := run("1", "", 0)
	root.Lease = liveLease()
	m := modelOf(t, root, run("2", "1", 1))
	m.SetRequests([]store.Request{
		{Kind: store.Plan, ID: "1", RunID: "2", AskedAt: t0.Add(time.Minute)},
		{Kind: store.Approval, ID: "10", RunID: "2"},
		{Kind: store.Approval, ID: "9", RunID: "2"},
		{Kind: store.Question, ID: "1", RunID: "gone", AskedAt: t0.Add(2 * time.Minute)},
	}, t0.Add(5*time.Minute))
	var keys []string
	for _, q := range m.Requests() {
		keys = append(keys, q.Key().String())
	}
	equal(t, "requests", keys, []string{"plan 1", "question 1", "approval 9", "approval 10"})

	c := &fakeClassifier{}
	if d, _ := m.Delivery(c, store.Request{Kind: store.Approval, ID: "9", RunID: "2"}, t0); d != store.Deliverable ||
		c.run.ID != "2" || c.lease != root.Lease {
		t.Fatalf("the source judged run %q with lease %v", c.run.ID, c.lease)
	}
	if d, why := m.Delivery(c, store.Request{Kind: store.Question, ID: "1", RunID: "gone"}, t0); d != store.Closed ||
		why != "run gone is not in the store" {
		t.Fatalf("a request of a missing run: %v %q", d, why)
	}
}

func TestDriftStats(t *testing.T) {
	r := func(n int64) *int64 { return &n }
	s := ComputeDrift([]store.ContextSample{{Estimated: 100, Reported: r(120)}, {Estimated: 50}, {NoEstimate: true, Reported: r(70)},
		{Estimated: 200, Reported: r(180)}})
	if s.Turns != 4 || s.Missing != 1 || s.NoEstimate != 1 || s.SumEst != 300 || s.SumReported != 300 || s.SumGap != 0 ||
		s.MeanAbsGap != 20 || s.Cumulative != 0 || s.MaxReported != 180 || s.Complete || !s.HasReported {
		t.Fatalf("%+v", s)
	}
	var parts DriftStats
	parts.Add([]store.ContextSample{{Estimated: 100, Reported: r(120)}})
	parts.Add([]store.ContextSample{{Estimated: 50}, {NoEstimate: true, Reported: r(70)}, {Estimated: 200, Reported: r(180)}})
	if parts.Finish() != s {
		t.Fatal("sums added in parts differ from sums added at once")
	}
}

// What a refresh says changed when a source sends again what the model
// holds: a run row or a request the same as before changes nothing, a
// request whose standing's reason alone was reworded is Reworded (shown
// with the counts), one whose standing moved is a request change.
func TestResentRowsChangeOnlyWhatMoved(t *testing.T) {
	m := modelOf(t, chain(3)...)
	run, _ := m.Run("2")
	if c := m.Apply(&store.Changes{Runs: []store.Run{run}}, t0); c.Runs || c.Tree {
		t.Fatalf("a run row sent again unchanged: %+v", c)
	}
	run.Status = store.StatusPaused
	if c := m.Apply(&store.Changes{Runs: []store.Run{run}}, t0); !c.Runs {
		t.Fatalf("a run row whose status moved: %+v", c)
	}
	q := store.Request{Kind: store.Approval, ID: "9", RunID: "2", Step: 1, Act: "write", Target: "a",
		Standing: store.StandingOrphaned, StandingReason: "rows up to step 1"}
	if c := m.Apply(&store.Changes{Requests: []store.Request{q}}, t0); !c.Requests {
		t.Fatalf("a new request: %+v", c)
	}
	if c := m.Apply(&store.Changes{Requests: []store.Request{q}}, t0); c.Requests || c.Reworded {
		t.Fatalf("a request sent again unchanged: %+v", c)
	}
	q.StandingReason = "rows up to step 2"
	if c := m.Apply(&store.Changes{Requests: []store.Request{q}}, t0); c.Requests || !c.Reworded {
		t.Fatalf("a request whose reason alone moved: %+v", c)
	}
	if got := m.Requests(); len(got) != 1 || got[0].StandingReason != "rows up to step 2" {
		t.Fatalf("the reworded request is not what the model holds: %+v", got)
	}
	q.Standing, q.StandingReason = store.StandingOpen, ""
	if c := m.Apply(&store.Changes{Requests: []store.Request{q}}, t0); !c.Requests {
		t.Fatalf("a request whose standing moved: %+v", c)
	}
}
