package tui

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/benchstore"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/views"
)

// Run side by side, e.g.:
//   go test ./tui -run '^$' -bench . -benchtime 200x
// The first run builds the big stores under $TMPDIR/vigil-bench.

// loadModel opens a store and brings a model to its first full frame:
// runs listed, the newest live run's tree, timeline and drift loaded, its
// newest step's detail read.
func loadModel(path string, w, h int) (*Model, error) {
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true})
	cmdTimeout = time.Minute // reads of a big store are not timers
	settle(m, tea.WindowSizeMsg{Width: w, Height: h})
	runCmd(m, m.Init())
	if !m.loaded || !m.st.agent.loaded {
		return nil, fmt.Errorf("model did not load: %s", m.problem)
	}
	return m, nil
}

// BenchmarkRenderFrame draws one 200×60 frame with every pane, on a run of
// 1 k steps and one of 100 k: only visible rows are drawn, so the cost must
// not grow with the number of steps.
func BenchmarkRenderFrame(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape benchstore.Shape
	}{
		{"steps=1k", benchstore.Shape{Runs: 5, Steps: 2_000, BigRun: 1_000, Open: 1}},
		{"steps=100k", benchstore.Shape{Runs: 5, Steps: 101_000, BigRun: 100_000, Open: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			path, err := benchstore.Path(c.shape)
			if err != nil {
				b.Fatal(err)
			}
			m, err := loadModel(path, 200, 60)
			if err != nil {
				b.Fatal(err)
			}
			defer m.src.Close()
			if n := m.st.agent.Len(); n < c.shape.BigRun {
				b.Fatalf("the open run has %d steps, want %d", n, c.shape.BigRun)
			}
			m.focusPane(paneTimeline)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Move the cursor so each frame differs, as while browsing.
				m.timeline.Key(keyMsg([]string{"k", "j"}[i%2]))
				if len(m.Render()) == 0 {
					b.Fatal("empty frame")
				}
			}
		})
	}
}

// BenchmarkFirstFrame starts vigil on 10 k runs / 1 M steps in a fresh
// process, from the start of its work to the first full frame, and reports
// that time and the process's peak RSS. (Each child is a new process so one
// run's memory cannot hide another's.)
func BenchmarkFirstFrame(b *testing.B) {
	path, err := benchstore.Path(benchstore.Shape{Runs: 10_000, Steps: 1_000_000, Open: 5})
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	var peak int64
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "VIGIL_TUI_CHILD=firstframe", "VIGIL_BENCH_STORE="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var ms float64
		var rss int64
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "%f %d", &ms, &rss); err != nil {
			b.Fatalf("child said %q", out)
		}
		total += time.Duration(ms * float64(time.Millisecond))
		peak = max(peak, rss)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-frame")
	b.ReportMetric(float64(peak)/1024, "MB-peak-RSS")
	b.ReportMetric(0, "ns/op")
}

// firstFrameChild is the child side of BenchmarkFirstFrame.
func firstFrameChild() int {
	start := time.Now()
	m, err := loadModel(os.Getenv("VIGIL_BENCH_STORE"), 200, 60)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	runCmd(m, m.wantDetail(true))
	frame := m.Render()
	elapsed := time.Since(start)
	if !strings.Contains(frame, "Timeline") || m.detail.RowID() == 0 {
		fmt.Println("incomplete first frame")
		return 1
	}
	fmt.Println(strconv.FormatFloat(float64(elapsed.Microseconds())/1000, 'f', 1, 64), peakRSS())
	return 0
}

// peakRSS is this process's resident high-water mark in KB. It is read
// from /proc (VmHWM) rather than getrusage: Linux carries the parent's
// high-water mark into a child's ru_maxrss across exec, so a child started
// by a big parent would report the parent's size.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Maxrss
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func TestMain(m *testing.M) {
	switch os.Getenv("VIGIL_TUI_CHILD") {
	case "demo":
		os.Exit(demoHarnessChild(os.Getenv("VIGIL_DEMO_PATH")))
	case "firstframe":
		os.Exit(firstFrameChild())
	case "burst":
		n, _ := strconv.Atoi(os.Getenv("VIGIL_BURST_N"))
		os.Exit(burstWriter(os.Getenv("VIGIL_BURST_PATH"), os.Getenv("VIGIL_BURST_RUN"), n))
	}
	// Every test draws a frame after every message, through the pane cache
	// (pane_cache.go), and checks the rows the tree and the timeline keep;
	// benchmarks time the frames as they are drawn.
	flag.Parse()
	notBench := flag.Lookup("test.bench").Value.String() == ""
	drawEveryMessage = notBench
	views.CheckTreeLines = notBench
	views.CheckTimelineRows = notBench
	// The explorer's decisions go to the per-user audit log by default:
	// one of this process's own, removed after, never the user's.
	state, err := os.MkdirTemp("", "vigil-tui-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := testkit.Main(m)
	os.RemoveAll(state)
	os.Exit(code)
}
