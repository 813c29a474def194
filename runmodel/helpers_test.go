package runmodel

import (
	"strconv"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// run is a running run started at t0 plus minute minutes, counted.
func run(id, parent string, minute int) store.Run {
	return store.Run{ID: id, ParentID: parent, Status: store.StatusRunning, StartedAt: t0.Add(time.Duration(minute) * time.Minute),
		StatsKnown: true}
}

func counted(r store.Run, steps int, tokens int64) store.Run {
	r.Steps, r.Tokens = steps, tokens
	return r
}

func modelOf(t testing.TB, runs ...store.Run) *Model {
	t.Helper()
	m := New(true)
	m.SetRuns(runs)
	return m
}

func equal(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s = %q, want %q", what, got, want)
		}
	}
}

// chain is n runs, each the child of the one before: 1 ← 2 ← … ← n.
func chain(n int) []store.Run {
	runs := make([]store.Run, n)
	for i := range runs {
		parent := ""
		if i > 0 {
			parent = strconv.Itoa(i)
		}
		runs[i] = counted(run(strconv.Itoa(i+1), parent, i), 1, 10)
		runs[i].Depth = i
	}
	return runs
}

// wide is a root with n-1 children.
func wide(n int) []store.Run {
	runs := make([]store.Run, n)
	for i := range runs {
		parent := ""
		if i > 0 {
			parent = "1"
		}
		runs[i] = counted(run(strconv.Itoa(i+1), parent, i), 1, 10)
	}
	return runs
}

// liveLease is a lease this process holds, renewed just now.
func liveLease() *store.Lease {
	return &store.Lease{Owner: "1-0-0", Generation: 1, AcquiredAt: t0, RenewedAt: t0, TTL: time.Hour}
}

// fakeClassifier records what it was asked and says deliverable.
type fakeClassifier struct {
	run   store.Run
	lease *store.Lease
}

func (f *fakeClassifier) Classify(_ store.Request, run store.Run, lease *store.Lease, _ time.Time) (store.Delivery, string) {
	f.run, f.lease = run, lease
	return store.Deliverable, ""
}
