package tui

import (
	"strconv"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// What a refresh that brings one new request costs the notices, with n
// requests already waiting: announce walks the waiting requests once.
func BenchmarkAnnounceOneArrival(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000} {
		b.Run("waiting="+strconv.Itoa(n), func(b *testing.B) {
			d := newDriver(b, 120, 40)
			now := d.clock
			var reqs []store.Request
			for i := 0; i < n; i++ {
				reqs = append(reqs, store.Request{Kind: store.Approval, ID: strconv.Itoa(1000 + i), RunID: "5", Step: 3, Act: "read", Target: "f" + strconv.Itoa(i)})
			}
			d.m.st.model.Apply(&store.Changes{Requests: reqs}, now)
			d.m.announce()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := store.Request{Kind: store.Approval, ID: strconv.Itoa(1_000_000 + i), RunID: "5", Step: 3, Act: "read", Target: "new"}
				d.m.st.model.Apply(&store.Changes{Requests: []store.Request{r}}, now)
				d.m.announce()
			}
		})
	}
}
