package runmodel

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// answerAll asks what `vigil runs` and the explorer's first frame ask of
// every run: its state, both counts, its lease, its root, its duration.
func answerAll(m *Model, now time.Time) {
	for _, id := range m.Newest() {
		m.State(id, now)
		m.Agent(id)
		m.Tree(id)
		m.Lease(id)
		m.RootOf(id)
		m.Duration(id, now)
	}
}

// TestScale builds a 100 000-deep chain of sub-agents and a 100 000-wide
// tree and answers every question of every run (issue 12 D4: the per-run
// ancestor walks never finished on the chain). The work must grow with the
// runs, not their square: ten times the runs may cost at most thirty times
// the time of the best of three smaller builds (quadratic would be a
// hundred), a ratio a loaded machine does not move the way it moves a
// deadline. BenchmarkScale has the figures.
func TestScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100 000 runs")
	}
	const n = 100_000
	shapes := map[string]func(int) []store.Run{"chain": chain, "wide": wide}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			small := time.Duration(1 << 62)
			for range 3 {
				small = min(small, buildAndAnswer(t, shape(n/10), n/10))
			}
			// Best of up to three, like the small one: a quadratic build is
			// 100× the small one, never within 30×, while a busy machine
			// can stretch any one pass.
			var m *Model
			took := time.Duration(1 << 62)
			for range 3 {
				runs := shape(n)
				runs[0].Lease = liveLease()
				start := time.Now()
				m = modelOf(t, runs...)
				m.SetRequests([]store.Request{{Kind: store.Question, ID: "1", RunID: strconv.Itoa(n)}}, t0)
				answerAll(m, t0)
				took = min(took, time.Since(start))
				if took <= 30*small+50*time.Millisecond {
					break
				}
			}
			t.Logf("%s: %d runs in %v, %d runs in %v", name, n/10, small, n, took)
			if took > 30*small+50*time.Millisecond {
				t.Errorf("%d runs took %v, %.0f× the %v of %d: not linear", n, took, float64(took)/float64(small), small, n/10)
			}
			if got := m.Tree("1"); got != (Counts{n, 10 * n, true, 0}) {
				t.Errorf("root's tree counts %+v", got)
			}
			if m.TreeWaiting("1") != 1 || m.State("1", t0) != store.StateWaiting {
				t.Errorf("the deepest run's question does not reach the root: %d, %v", m.TreeWaiting("1"), m.State("1", t0))
			}
			if l, holder := m.Lease(strconv.Itoa(n)); l == nil || holder != "1" {
				t.Errorf("the last run's lease %v held by %q", l, holder)
			}
			if name == "chain" && len(m.Ancestry(strconv.Itoa(n))) != n {
				t.Errorf("ancestry of the deepest run has %d runs", len(m.Ancestry(strconv.Itoa(n))))
			}
		})
	}
}

func BenchmarkBuildAndAnswer(b *testing.B) {
	for name, runs := range map[string][]store.Run{"chain=100k": chain(100_000), "wide=100k": wide(100_000)} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m := New(true)
				m.SetRuns(runs)
				answerAll(m, t0)
			}
		})
	}
}

// BenchmarkApplyStep folds one step row into a model of 100 000 runs: the
// bookkeeping is O(changes), whatever the store's size.
func BenchmarkApplyStep(b *testing.B) {
	m := modelOf(b, chain(100_000)...)
	answerAll(m, t0)
	row := store.StepRow{RunID: "50000", Number: 2, Tokens: 1}
	ch := &store.Changes{Steps: []store.StepRow{row}}
	for i := 0; b.Loop(); i++ {
		row.RowID = int64(i + 1)
		ch.Steps[0] = row
		m.Apply(ch, t0)
	}
}

// buildAndAnswer is the time to build a model of runs and answer every
// question of every run.
func buildAndAnswer(t testing.TB, runs []store.Run, n int) time.Duration {
	runs[0].Lease = liveLease()
	start := time.Now()
	m := modelOf(t, runs...)
	m.SetRequests([]store.Request{{Kind: store.Question, ID: "1", RunID: strconv.Itoa(n)}}, t0)
	answerAll(m, t0)
	return time.Since(start)
}

// BenchmarkScale: building and answering 100 000 runs, as a chain and as
// one wide tree.
func BenchmarkScale(b *testing.B) {
	for name, shape := range map[string]func(int) []store.Run{"chain": chain, "wide": wide} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				runs := shape(100_000)
				b.StartTimer()
				buildAndAnswer(b, runs, 100_000)
			}
		})
	}
}

// BenchmarkLoad100k is what runmodel.Load and a command's list make of a
// store of 100 000 runs whose counts the run list leaves unknown (io-harness's
// running runs): the runs taken in, the unknown ones listed and counted,
// then every run read newest first, as `vigil runs` reads them.
func BenchmarkLoad100k(b *testing.B) {
	for name, shape := range map[string]func(int) []store.Run{"chain": chain, "wide": wide} {
		runs := shape(100_000)
		stats := make(map[string]store.RunStats, len(runs))
		for i := range runs {
			runs[i].StatsKnown = false
			stats[runs[i].ID] = store.RunStats{Steps: 1, Tokens: 10, Through: 100}
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m := New(true)
				m.SetRuns(slices.Clone(runs))
				if len(m.Unknown()) != len(runs) {
					b.Fatal("counts known")
				}
				m.ApplyStats(stats)
				for _, id := range m.Newest() {
					if _, ok := m.Read(id, t0); !ok {
						b.Fatalf("run %s not read", id)
					}
				}
			}
		})
	}
}
