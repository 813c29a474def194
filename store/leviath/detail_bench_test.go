//go:build unix

package leviath

import (
	"os"
	"testing"
)

// BenchmarkDetailsInOrder: every step's detail read in order, as
// `vigil show RUN --json` reads them, over a journal of 48 frames of an
// assistant turn and its 256 KB tool result (a third of them past
// skeletonFrames). frames/op is how many frames were decoded for it.
func BenchmarkDetailsInOrder(b *testing.B) {
	runs, id, _ := pairsJournal(b, 48, 256<<10)
	detailsBench(b, runs, id)
}

// BenchmarkDetailsBigJournal: the same over the cached 1 GB journal of
// 256 KB results (VIGIL_BIG=1 go test -run TestBigJournal builds it).
func BenchmarkDetailsBigJournal(b *testing.B) {
	runs := "/tmp/vigil-bench/leviath-1073741824-262144/runs"
	if _, err := os.Stat(runs + "/../done"); err != nil {
		b.Skip("no cached 1 GB journal")
	}
	detailsBench(b, runs, "big-1785427200-0123456789ab")
}

func detailsBench(b *testing.B, runs, id string) {
	s, err := Open(runs)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st := steps(b, s, id)
	b.ReportAllocs()
	b.ResetTimer()
	c0, d0 := cpuTime(), decodes(s)
	for i := 0; i < b.N; i++ {
		for _, x := range st {
			if _, err := s.StepDetail(bg, id, x.RowID); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e9, "cpu-s/op")
	b.ReportMetric(float64(decodes(s)-d0)/float64(b.N), "frames/op")
}
