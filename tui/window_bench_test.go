package tui

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// BenchmarkCommitToFrame is one commit of one step (its row and its context
// sample) folded into the explorer and drawn, while the shown run already
// has 10 k steps and while it has 500 k: the per-commit work must not grow
// with the run (compare the two ns/op; ratio ≈ 1 is flat). heap-MB is the
// live heap after the run was grown, held to the window, not the run.
//
//	go test ./tui -run '^$' -bench CommitToFrame -benchtime 2000x
func BenchmarkCommitToFrame(b *testing.B) {
	for _, n := range []int{10_000, 500_000} {
		b.Run(fmt.Sprintf("steps=%dk", n/1000), func(b *testing.B) {
			d := newDriver(b, 120, 32)
			d.press("3") // the live root, #4, followed
			cur := d.m.cursor
			row := int64(1 << 40) // above every row of the fixture
			step := 100
			commit := func(k int) {
				ch := &store.Changes{}
				for i := 0; i < k; i++ {
					row++
					step++
					ch.Steps = append(ch.Steps, store.StepRow{RowID: row, RunID: "4", Number: step, Kind: store.StepTurn,
						Decision: fmt.Sprintf("read src/file%d.rs", step%50), ToolCall: `read_file:{"path":"src/file.rs"}`,
						ResultHead: "[read src/file.rs] xxxxxxxx", Tokens: 300})
					ch.Context = append(ch.Context, store.ContextSample{RowID: row, RunID: "4", Step: step, Estimated: 270, Detail: "carried=1"})
				}
				d.m.Update(changesMsg{from: from{d.m.src.gen}, ch: ch, next: cur, at: time.Now()})
			}
			for grown := 0; grown < n; grown += 1000 {
				commit(1000)
			}
			if got := d.m.st.agent.Len(); got < n {
				b.Fatalf("the run has %d steps, want %d", got, n)
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				commit(1)
				if len(d.m.Render()) == 0 {
					b.Fatal("empty frame")
				}
			}
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		})
	}
}
