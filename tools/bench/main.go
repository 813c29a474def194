// Command bench measures vigil against the goals of issue 15, side by
// side in one run: the first frame of the real binary in tmux, runs --json
// beside C SQLite's one-pass GROUP BY, a foreign commit to the screen and
// to vigil tail, and memory while a run grows by a million steps live.
//
//	go run ./tools/bench            # the small and the 1 M-step stores
//	go run ./tools/bench -huge      # and the 10 M-step store (built once: minutes)
//
// Stores are built once with C SQLite and cached under $TMPDIR/vigil-bench;
// the binary is built from this checkout each run. docs/performance.md
// says what each figure measures.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type config struct {
	dir     string // the cache of stores
	work    string // this run's scratch directory
	vigil   string // the binary measured
	rounds  int
	commits int
	appendN int
	huge    bool
	only    map[string]bool
	verbose bool
}

// The stores, as the issue names them.
var (
	smallShape = shape{Runs: 13, Steps: 390, Open: 1}
	bigShape   = shape{Runs: 10_000, Steps: 1_000_000, Open: 5, Crashed: 97}
	hugeShape  = shape{Runs: 100_000, Steps: 10_000_000, Open: 5, Crashed: 97}
)

func main() {
	var c config
	var only, bin string
	flag.StringVar(&c.dir, "cache", filepath.Join(os.TempDir(), "vigil-bench"), "where built stores are kept")
	flag.StringVar(&bin, "vigil", "", "the vigil binary to measure (default: build this checkout)")
	flag.IntVar(&c.rounds, "rounds", 5, "fresh processes per first-frame and runs --json figure (the best and the median are shown)")
	flag.IntVar(&c.commits, "commits", 80, "foreign commits timed to the screen and to tail")
	flag.IntVar(&c.appendN, "append", 1_000_000, "steps appended live to the run on screen")
	flag.BoolVar(&c.huge, "huge", false, "also measure 100 k runs / 10 M steps (building that store once takes minutes and 7 GB)")
	flag.StringVar(&only, "only", "", "comma-separated figures to measure: small, big, huge, json, screen, tail, append (default: all)")
	flag.BoolVar(&c.verbose, "v", false, "print the screens measured")
	flag.Parse()
	if only != "" {
		c.only = map[string]bool{}
		for _, f := range strings.Split(only, ",") {
			c.only[strings.TrimSpace(f)] = true
		}
		c.huge = c.huge || c.only["huge"]
	}
	if err := run(&c, bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (c *config) want(fig string) bool { return c.only == nil || c.only[fig] }

func logf(f string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+f+"\n", a...) }

func run(c *config, bin string) error {
	began := time.Now()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "vigil-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	c.work = work
	if bin == "" {
		bin = filepath.Join(work, "vigil")
		logf("building vigil from this checkout")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	c.vigil = bin
	small, err := storePath(c.dir, smallShape, logf)
	if err != nil {
		return err
	}
	var big, huge string
	if c.want("big") || c.want("json") {
		if big, err = storePath(c.dir, bigShape, logf); err != nil {
			return err
		}
	}
	if c.huge {
		if huge, err = storePath(c.dir, hugeShape, logf); err != nil {
			return err
		}
	}
	t, err := newTerm(work, 120, 32)
	if err != nil {
		return err
	}
	defer t.close()

	var rows []row
	// A figure that cannot be measured (vigil never showed what it waited
	// for) is a row that says so: the others are still measured.
	add := func(name string, r row, err error) {
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			r = row{figure: name, now: "failed: " + first, goal: "-", ratio: math.Inf(1)}
			if c.verbose {
				fmt.Fprintln(os.Stderr, err)
			}
		}
		rows = append(rows, r)
		logf("%s: %s", r.figure, r.now)
	}
	if c.want("small") {
		r, err := firstFrame(c, t, small, smallShape, 60*time.Millisecond, 0)
		add("first frame, "+smallShape.String(), r, err)
	}
	if c.want("big") {
		r, err := firstFrame(c, t, big, bigShape, 150*time.Millisecond, 0)
		add("first frame, "+bigShape.String(), r, err)
	}
	if c.huge {
		r, err := firstFrame(c, t, huge, hugeShape, 250*time.Millisecond, 150<<10)
		add("first frame, "+hugeShape.String(), r, err)
	}
	if c.want("json") {
		r, err := runsJSON(c, big, bigShape, c.rounds)
		add("`vigil runs --json`, "+bigShape.String(), r, err)
		if c.huge {
			// One round: 7.5 GB is read from disk by both when the page
			// cache cannot hold it.
			r, err := runsJSON(c, huge, hugeShape, 1)
			add("`vigil runs --json`, "+hugeShape.String(), r, err)
		}
	}
	if c.want("screen") {
		r, err := commitToScreen(c, t, small)
		add("commit → row on screen", r, err)
	}
	if c.want("tail") {
		r, err := commitToTail(c, small)
		add("commit → `vigil tail` line", r, err)
	}
	if c.want("append") {
		r, err := liveAppend(c, t, small)
		add(fmt.Sprintf("tailing one run while %s steps are appended live", count(c.appendN)), r, err)
	}
	printTable(os.Stdout, rows)
	fmt.Printf("\n%s, %d cores, in %s\n", strings.TrimSpace(hostLine()), numCPU(), time.Since(began).Round(time.Second))
	if !c.huge {
		fmt.Println("100 k runs / 10 M steps: not measured (opt in with -huge: the store takes minutes and 7 GB to build once)")
	}
	return nil
}

// row is one line of the table: a figure, what was measured, the goal and
// how far from it.
type row struct {
	figure string
	now    string // the measurement, as shown
	goal   string
	ratio  float64 // measured ÷ goal: ≤ 1 meets it
	detail string
}

func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| figure | measured | goal | ÷ goal | |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		mark, ratio := "meets", fmt.Sprintf("%.2f", r.ratio)
		if r.ratio > 1 {
			mark = "misses"
		}
		if math.IsInf(r.ratio, 1) {
			ratio = "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.figure, r.now, r.goal, ratio, mark)
	}
	for _, r := range rows {
		if r.detail != "" {
			fmt.Fprintf(w, "\n%s: %s", r.figure, r.detail)
		}
	}
	fmt.Fprintln(w)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// quantile of sorted durations (q in 0…1), nearest rank.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s)) + 0.999999)
	return s[min(max(i-1, 0), len(s)-1)]
}

func hostLine() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load average " + strings.Join(f[:3], " ")
}
