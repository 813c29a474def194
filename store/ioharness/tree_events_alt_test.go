package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// The alternatives newestOfEach was measured against on the 100 k-agent
// store (VIGIL_BIG=1 go test -run X -bench BigTreeAlt ./store/ioharness/):
// one statement per agent (runEvents, the path of a few agents), and one
// covering scan of run_events_run keeping each wanted agent's newest n ids
// in Go, then the rows by id in sorted chunks.

func BenchmarkBigTreeAltPerAgent(b *testing.B) {
	path := bigStreamStore(b)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < b.N; i++ {
		n := 0
		for r := int64(1); r <= 100_000; r++ {
			evs, err := s.runEvents(context.Background(), r, 0, math.MaxInt64, 64)
			if err != nil {
				b.Fatal(err)
			}
			n += len(evs)
		}
		b.ReportMetric(float64(n), "events")
	}
}

func BenchmarkBigTreeAltCoveringScan(b *testing.B) {
	path := bigStreamStore(b)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	want := map[int64]bool{}
	for r := int64(1); r <= 100_000; r++ {
		want[r] = true
	}
	const n = 64
	for i := 0; i < b.N; i++ {
		var ids []int64
		cur, ring := int64(-1), make([]int64, 0, n)
		flush := func() {
			if want[cur] {
				ids = append(ids, ring...)
			}
			ring = ring[:0]
		}
		err := s.eachRow(context.Background(), "SELECT run_id, id FROM run_events INDEXED BY run_events_run ORDER BY run_id, id", nil, func(r *sql.Rows) error {
			var rn, id int64
			if err := r.Scan(&rn, &id); err != nil {
				return err
			}
			if rn != cur {
				flush()
				cur = rn
			}
			if len(ring) == n {
				copy(ring, ring[1:])
				ring = ring[:n-1]
			}
			ring = append(ring, id)
			return nil
		})
		flush()
		if err != nil {
			b.Fatal(err)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		var evs []store.RunEvent
		for len(ids) > 0 {
			k := min(len(ids), 500)
			q := fmt.Sprintf("SELECT "+eventCols+" FROM run_events WHERE id IN (%s)", maxEventJSON, sqlitex.IDList(ids[:k]))
			ids = ids[k:]
			if err := s.eachRow(context.Background(), q, nil, func(r *sql.Rows) error {
				e, err := scanEvent(r)
				evs = append(evs, e)
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(evs)), "events")
	}
}

// A tree of manyIDs agents, the busiest of the store: the per-agent path
// Activity takes against newestOfEach's one statement.
func BenchmarkBigTreeAltFewPerAgent(b *testing.B) { benchFew(b, false) }
func BenchmarkBigTreeAltFewOneRead(b *testing.B)  { benchFew(b, true) }

func benchFew(b *testing.B, one bool) {
	path := bigStreamStore(b)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var runs []int64
	for r := int64(2); r < 2+manyIDs; r++ {
		runs = append(runs, r)
	}
	for i := 0; i < b.N; i++ {
		var evs []store.RunEvent
		if one {
			evs, err = s.newestOfEach(context.Background(), runs, 0, math.MaxInt64, 64)
		} else {
			for _, r := range runs {
				got, err := s.runEvents(context.Background(), r, 0, math.MaxInt64, 64)
				if err != nil {
					b.Fatal(err)
				}
				evs = append(evs, got...)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(evs)), "events")
	}
}
