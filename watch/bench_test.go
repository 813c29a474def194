package watch

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store/ioharness"
)

// go test ./watch -run TestLatencyReport -latency -v -timeout 10m
var (
	latencyReport = flag.Bool("latency", false, "run TestLatencyReport (push vs polling latency/CPU table, ~7 minutes)")
	latencyRaw    = flag.Bool("latency-raw", false, "with -latency: tail a bare table with raw SQL instead of an io-harness store through the store layer")
)

// RefreshFunc is the reader's refresh: read what is new, say how much.
type RefreshFunc func(ctx context.Context) (newRows int, err error)

// benchSource is what the benchmark tails. sqlTailSource is the raw SQL tail
// query; the store layer's incremental read can be plugged in instead.
type benchSource struct {
	Refresh RefreshFunc
	Version func() (uint64, error)           // the probe given to the watcher
	SeenAt  func(id int64) (time.Time, bool) // when the reader had row id in memory
	Rows    func() int                       // rows read so far
	Close   func()
}

func sqlTailSource(db string) benchSource {
	tl := newTail(db)
	return benchSource{
		Refresh: tl.refresh,
		Version: tl.dataVersion,
		SeenAt:  func(id int64) (time.Time, bool) { return tl.seenAt("a", id) },
		Rows:    func() int { tl.mu.Lock(); defer tl.mu.Unlock(); return tl.rows },
		Close:   tl.shutdown,
	}
}

// storeSource tails an io-harness store the way vigil's UI does: a
// read-only store handle, a cursor, and Changes on every signal; a row is
// "in the model" when Changes has returned it.
func storeSource(tb testing.TB, db string) benchSource {
	s, err := ioharness.Open(db)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	existing, err := s.Steps(ctx, "1")
	if err != nil {
		tb.Fatal(err)
	}
	cur, err := s.Head(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]time.Time{}
	rows := len(existing)
	return benchSource{
		Refresh: func(ctx context.Context) (int, error) {
			n := 0
			for {
				ch, next, err := s.Changes(ctx, cur)
				if err != nil {
					return n, err
				}
				cur = next
				now := time.Now()
				mu.Lock()
				for _, st := range ch.Steps {
					seen[int64(st.Number)] = now
				}
				rows += len(ch.Steps)
				mu.Unlock()
				n += len(ch.Steps)
				if !ch.More {
					return n, nil
				}
			}
		},
		Version: s.DataVersion,
		SeenAt: func(id int64) (time.Time, bool) {
			mu.Lock()
			defer mu.Unlock()
			t, ok := seen[id]
			return t, ok
		},
		Rows:  func() int { mu.Lock(); defer mu.Unlock(); return rows },
		Close: func() { s.Close() },
	}
}

func benchSourceFor(tb testing.TB, db string) benchSource {
	if *latencyRaw {
		return sqlTailSource(db)
	}
	return storeSource(tb, db)
}

func writerFlags() []string {
	if *latencyRaw {
		return nil
	}
	return []string{"-store"}
}

type benchReader struct {
	w        *Watcher
	src      benchSource
	progress chan struct{}
	done     chan struct{}
}

func startBenchReader(tb testing.TB, db string, mode Mode) *benchReader {
	src := benchSourceFor(tb, db)
	o := Options{Path: db, Version: src.Version}
	if mode == Poll {
		o.Poll = 250 * time.Millisecond
	}
	w, err := New(o) // the watch first, then the initial load: nothing falls in between
	if err != nil {
		tb.Fatal(err)
	}
	r := &benchReader{w: w, src: src, progress: make(chan struct{}, 1), done: make(chan struct{})}
	if _, err := src.Refresh(context.Background()); err != nil {
		tb.Fatal(err)
	}
	go func() {
		defer close(r.done)
		ctx := context.Background()
		for s := range w.C() {
			if s.Kind != Changed {
				continue
			}
			n, _ := src.Refresh(ctx)
			w.Ack(n > 0)
			select {
			case r.progress <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

func (r *benchReader) waitRows(tb testing.TB, n int, timeout time.Duration) {
	deadline := time.After(timeout)
	for r.src.Rows() < n {
		select {
		case <-r.progress:
		case <-deadline:
			tb.Fatalf("reader has %d of %d rows after %v", r.src.Rows(), n, timeout)
		}
	}
}

func (r *benchReader) stop() {
	r.w.Close()
	<-r.done
	r.src.Close()
}

// quiesce returns freed memory to the OS now, so the runtime's background
// scavenger does not bill its work to the next measurement window.
func quiesce() {
	runtime.GC()
	debug.FreeOSMemory()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type benchResult struct {
	name, reader    string
	commits         int
	p50, p99, max   time.Duration
	signals, events uint64
	cpu             float64 // reader process CPU, % of one core
	wp50, wp99      time.Duration
	maxWAL          int64
}

// runLoad starts a fresh database, an optional reader, and a writer process
// committing n rows at rate/s.
func runLoad(tb testing.TB, name string, mode Mode, withReader bool, rate float64, n int) benchResult {
	dir := tb.TempDir()
	db := filepath.Join(dir, "lat.db")
	wr := startWriter(tb, db, "NORMAL", "a", writerFlags()...)
	wr.do("insert 1", 10*time.Second)
	res := benchResult{name: name, reader: "none", commits: n}
	var r *benchReader
	if withReader {
		res.reader = mode.String()
		if mode == Poll {
			res.reader = "poll 250ms"
		}
		r = startBenchReader(tb, db, mode)
		defer r.stop()
		r.waitRows(tb, 1, 10*time.Second)
	}
	logPath := filepath.Join(dir, "w.log")
	quiesce()
	c0, t0 := cpuTime(), time.Now()
	f := wr.do(fmt.Sprintf("rate %g %d %s", rate, n, logPath), 5*time.Minute)
	res.maxWAL, _ = strconv.ParseInt(f[0], 10, 64)
	if r != nil {
		r.waitRows(tb, n+1, 30*time.Second)
		res.cpu = float64(cpuTime()-c0) / float64(time.Since(t0)) * 100
		st := r.w.Stats()
		res.signals, res.events = st.Changed, st.EventsRead
	}
	wr.stop()

	lf, err := os.Open(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer lf.Close()
	var lat, dur []time.Duration
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		var id, ret, d int64
		if _, err := fmt.Sscan(sc.Text(), &id, &ret, &d); err != nil {
			tb.Fatal(err)
		}
		dur = append(dur, time.Duration(d))
		if r != nil {
			at, ok := r.src.SeenAt(id)
			if !ok {
				tb.Fatalf("row %d never seen", id)
			}
			lat = append(lat, at.Sub(time.Unix(0, ret)))
		}
	}
	if len(dur) != n {
		tb.Fatalf("writer logged %d of %d commits", len(dur), n)
	}
	res.p50, res.p99, res.max = percentile(lat, 50), percentile(lat, 99), percentile(lat, 100)
	res.wp50, res.wp99 = percentile(dur, 50), percentile(dur, 99)
	return res
}

// runIdle measures the reader's CPU over d with no writer.
func runIdle(tb testing.TB, mode Mode, d time.Duration) benchResult {
	db := filepath.Join(tb.TempDir(), "idle.db")
	wr := startWriter(tb, db, "NORMAL", "a", writerFlags()...)
	wr.do("insert 10", 10*time.Second)
	wr.stop()
	r := startBenchReader(tb, db, mode)
	defer r.stop()
	r.waitRows(tb, 10, 10*time.Second)
	time.Sleep(600 * time.Millisecond) // let the start-up re-checks finish
	quiesce()
	c0, t0 := cpuTime(), time.Now()
	time.Sleep(d)
	res := benchResult{name: fmt.Sprintf("idle %v", d), reader: mode.String()}
	if mode == Poll {
		res.reader = "poll 250ms"
	}
	res.cpu = float64(cpuTime()-c0) / float64(time.Since(t0)) * 100
	res.signals = r.w.Stats().Changed
	return res
}

// medianOf runs f reps times and keeps, per statistic, the median.
func medianOf(reps int, f func() benchResult) benchResult {
	var rs []benchResult
	for range reps {
		rs = append(rs, f())
	}
	med := func(get func(benchResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	out := rs[0]
	out.p50 = time.Duration(med(func(r benchResult) float64 { return float64(r.p50) }))
	out.p99 = time.Duration(med(func(r benchResult) float64 { return float64(r.p99) }))
	out.max = time.Duration(med(func(r benchResult) float64 { return float64(r.max) }))
	out.signals = uint64(med(func(r benchResult) float64 { return float64(r.signals) }))
	out.events = uint64(med(func(r benchResult) float64 { return float64(r.events) }))
	out.cpu = med(func(r benchResult) float64 { return r.cpu })
	out.wp50 = time.Duration(med(func(r benchResult) float64 { return float64(r.wp50) }))
	out.wp99 = time.Duration(med(func(r benchResult) float64 { return float64(r.wp99) }))
	out.maxWAL = int64(med(func(r benchResult) float64 { return float64(r.maxWAL) }))
	return out
}

func TestLatencyReport(t *testing.T) {
	if !*latencyReport {
		t.Skip("enable with -latency")
	}
	const (
		sparseRate, sparseN = 20, 2000
		burstRate, burstN   = 2000, 2000
		burstReps           = 3
		idleFor             = 10 * time.Second
	)
	start := time.Now()
	var rows []benchResult
	for _, m := range []Mode{Push, Poll} {
		rows = append(rows, runIdle(t, m, idleFor))
	}
	for _, m := range []Mode{Push, Poll} {
		rows = append(rows, runLoad(t, "sparse 20/s", m, true, sparseRate, sparseN))
	}
	rows = append(rows, runLoad(t, "sparse 20/s", Push, false, sparseRate, sparseN))
	for _, cfg := range []struct {
		m      Mode
		reader bool
	}{{Push, true}, {Poll, true}, {Push, false}} {
		rows = append(rows, medianOf(burstReps, func() benchResult {
			return runLoad(t, "burst 2000/s", cfg.m, cfg.reader, burstRate, burstN)
		}))
	}
	printReport(os.Stdout, rows, time.Since(start))
}

func printReport(out io.Writer, rows []benchResult, took time.Duration) {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) }
	dash := func(ok bool, s string) string {
		if !ok {
			return "–"
		}
		return s
	}
	fmt.Fprintln(out, "| scenario | reader | commits | latency p50 / p99 / max ms | Changed signals | fs events read | reader CPU | writer commit p50 / p99 µs | max -wal |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		hasLat := r.reader != "none" && r.commits > 0
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.name, r.reader,
			dash(r.commits > 0, strconv.Itoa(r.commits)),
			dash(hasLat, ms(r.p50)+" / "+ms(r.p99)+" / "+ms(r.max)),
			dash(r.reader != "none", strconv.FormatUint(r.signals, 10)),
			dash(hasLat && r.reader == "push", strconv.FormatUint(r.events, 10)),
			dash(r.reader != "none", strconv.FormatFloat(r.cpu, 'f', 2, 64)+"%"),
			dash(r.commits > 0, us(r.wp50)+" / "+us(r.wp99)),
			dash(r.commits > 0, strconv.FormatFloat(float64(r.maxWAL)/(1<<20), 'f', 1, 64)+" MB"),
		)
	}
	writer := "store layer: one CheckpointStep per commit (step row + checkpoint event + lease renewal), synchronous at SQLite's default as io-harness leaves it; the reader is ioharness.Open + Changes, as the UI tails"
	if *latencyRaw {
		writer = "raw SQL: one INSERT per commit, synchronous=NORMAL; the reader is a raw id > ? tail query"
	}
	fmt.Fprintf(out, "\nBurst rows: median of 3 runs per statistic. Sparse rows: one run of 2 000 commits.\n"+
		"Latency: the writer process's COMMIT returning -> the reader process has the row in memory (wall clock).\n"+
		"Reader CPU: getrusage(RUSAGE_SELF) of the reader process over the window (first commit to last row read), 100%% = one core.\n"+
		"Writer: %s; -wal size sampled every 10 commits. Total %v.\n", writer, took.Round(time.Second))
}
