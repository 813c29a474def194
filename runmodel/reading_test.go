package runmodel

import (
	"math/rand"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Read is every accessor a list row calls, in one look-up: on a forest of
// every shape (loops, orphans, leases held up the tree, expired ones,
// summaries, counts not known, requests waiting) each run reads as State,
// Agent, Tree, Agents, Waiting, TreeWaiting, Duration, RootOf, Lease and
// Liveness say.
func TestReadAgreesWithEachAccessor(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for round := 0; round < 20; round++ {
		n := 1 + rng.Intn(60)
		runs := make([]store.Run, n)
		for i := range runs {
			parent := ""
			switch k := rng.Intn(6); {
			case k == 0 || i == 0:
			case k == 1:
				parent = strconv.Itoa(1 + rng.Intn(n+3)) // a loop, an orphan or a later run
			default:
				parent = strconv.Itoa(1 + rng.Intn(i))
			}
			r := counted(run(strconv.Itoa(i+1), parent, rng.Intn(30)), rng.Intn(9), int64(rng.Intn(900)))
			switch rng.Intn(5) {
			case 0:
				r.Lease = liveLease()
			case 1:
				r.Lease = &store.Lease{Owner: "2-0-0", RenewedAt: t0.Add(-time.Hour), TTL: time.Minute}
			}
			switch rng.Intn(4) {
			case 0:
				r.Status, r.Outcome = store.StatusCompleted, "success"
				r.Summary = &store.Summary{Outcome: "success", Steps: r.Steps, Tokens: r.Tokens, Duration: time.Minute, HasDuration: rng.Intn(2) == 0}
			case 1:
				r.StatsKnown = false
			case 2:
				if rng.Intn(3) == 0 {
					r.StartedAt = time.Time{}
				}
			}
			runs[i] = r
		}
		m := New(rng.Intn(4) != 0)
		m.SetRuns(runs)
		var reqs []store.Request
		for k := rng.Intn(8); k > 0; k-- {
			reqs = append(reqs, store.Request{Kind: store.Approval, ID: strconv.Itoa(k), RunID: strconv.Itoa(1 + rng.Intn(n+2))})
		}
		m.SetRequests(reqs, t0)
		now := t0.Add(time.Duration(rng.Intn(120)) * time.Minute)
		for _, id := range append(m.Newest(), "absent") {
			got, ok := m.Read(id, now)
			r, inModel := m.Run(id)
			want := Reading{Run: r, State: m.State(id, now), Own: m.Agent(id), Tree: m.Tree(id), Agents: m.Agents(id),
				Waiting: m.Waiting(id), TreeWaiting: m.TreeWaiting(id)}
			want.Duration, want.HasDuration = m.Duration(id, now)
			want.Root, want.Liveness = m.RootOf(id), m.Liveness(id, now)
			want.Lease, want.LeaseHolder = m.Lease(id)
			if !inModel {
				want = Reading{}
			}
			if ok != inModel || !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, run %s: Read = %+v (%t)\nwant %+v (%t)", round, id, got, ok, want, inModel)
			}
		}
	}
}
