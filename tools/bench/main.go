// Command bench measures vigil against the goals of issues 15 and 30, side
// by side in one run: the first frame of the real binary in tmux on stores
// of several shapes and on Claude Code and opencode histories, runs --json beside C
// SQLite's one-pass GROUP BY, a foreign commit to the screen and to vigil
// tail, and memory while a run grows by a million steps live.
//
//	go run ./tools/bench            # the small and the 1 M-step stores
//	go run ./tools/bench -huge      # and the 10 M-step stores and the history (built once: minutes)
//	go run ./tools/bench -before OLD -only ioh,imported,claude,json   # OLD in turn, round by round
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
	before  string // another build measured in turn with it (-before)
	rounds  int
	commits int
	appendN int
	huge    bool
	only    map[string]bool
	verbose bool
}

// The stores, as issues 15 and 30 name them.
var (
	smallShape = shape{Runs: 13, Steps: 390, Open: 1}
	bigShape   = shape{Runs: 10_000, Steps: 1_000_000, Open: 5, Crashed: 97}
	hugeShape  = shape{Runs: 100_000, Steps: 10_000_000, Open: 5, Crashed: 97}
	// Issue 30's shape: every tenth run a root with nine children, a third
	// of the runs left running by a crashed driver (no lease, no summary),
	// no request waiting, ~100-byte prompts and results.
	ioShape       = shape{Label: "issue 30's shape", Runs: 10_000, Steps: 1_000_000, Crashed: 3, Tree: 10, Short: true}
	importedShape = shape{Label: "imported (ids ≠ start order)", Runs: 10_000, Steps: 1_000_000, Crashed: 3, Tree: 10, Short: true, Imported: true}
	io10Shape     = shape{Label: "issue 30's shape", Runs: 100_000, Steps: 10_000_000, Crashed: 3, Tree: 10, Short: true}
)

// measured is a store whose first frame and runs --json the bench times.
type measured struct {
	key   string // its name for -only
	shape shape
	frame time.Duration // the first frame's goal
	rssKB int64         // the peak RSS's goal (0: not measured)
	huge  bool          // only with -huge
}

// claudeHistory is issue 30's Claude Code history: 2 000 sessions, 2 GB.
var claudeHistory = history{Sessions: 2000, Projects: 20, Big: 8, BigBytes: 200 << 20}

// codexHistory is issue 30's Codex sessions tree of the same size.
var codexHistory = codexTree{Sessions: 2000, Big: 8, BigBytes: 200 << 20}

var measuredStores = []measured{
	{"small", smallShape, 60 * time.Millisecond, 0, false},
	{"big", bigShape, 150 * time.Millisecond, 150 << 10, false},
	{"ioh", ioShape, 150 * time.Millisecond, 150 << 10, false},
	{"imported", importedShape, 150 * time.Millisecond, 150 << 10, false},
	{"huge", hugeShape, 250 * time.Millisecond, 150 << 10, true},
	{"ioh10m", io10Shape, 250 * time.Millisecond, 150 << 10, true},
}

func main() {
	var c config
	var only, bin string
	flag.StringVar(&c.dir, "cache", filepath.Join(os.TempDir(), "vigil-bench"), "where built stores are kept")
	flag.StringVar(&bin, "vigil", "", "the vigil binary to measure (default: build this checkout)")
	flag.StringVar(&c.before, "before", "", "another vigil binary whose first frames and runs --json are measured in turn with this one's, round by round")
	flag.IntVar(&c.rounds, "rounds", 5, "fresh processes per first-frame and runs --json figure (the best and the median are shown)")
	flag.IntVar(&c.commits, "commits", 200, "foreign commits (and lines appended to agent-CLI sessions) timed to the screen and to tail: at least 100 for a p99 that is not the slowest one")
	flag.IntVar(&c.appendN, "append", 1_000_000, "steps appended live to the run on screen")
	flag.BoolVar(&c.huge, "huge", false, "also measure 100 k runs / 10 M steps (building that store once takes minutes and 7 GB)")
	flag.StringVar(&only, "only", "", "comma-separated stores and figures to measure: stores small, big, ioh, imported, huge, ioh10m, claude, codex, opencode (their first frames and a line appended live); figures json (of the stores named, else of every big one), screen, serve (through vigil serve, 50 sessions watching), tail, append (default: all)")
	flag.BoolVar(&c.verbose, "v", false, "print the screens measured")
	flag.Parse()
	if only != "" {
		c.only = map[string]bool{}
		for _, f := range strings.Split(only, ",") {
			c.only[strings.TrimSpace(f)] = true
		}
		c.huge = c.huge || c.only["huge"] || c.only["ioh10m"]
	}
	if err := run(&c, bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (c *config) want(fig string) bool { return c.only == nil || c.only[fig] }

// namesStores says whether -only names any store: then json is measured
// on those alone.
func (c *config) namesStores() bool {
	for _, m := range measuredStores {
		if c.only[m.key] {
			return true
		}
	}
	return false
}

// wantJSON says whether runs --json is measured on the store.
func (c *config) wantJSON(m measured) bool {
	if m.key == "small" || !c.want("json") {
		return false
	}
	return c.only == nil || !c.namesStores() || c.only[m.key]
}

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
	paths := map[string]string{}
	for _, m := range measuredStores {
		if m.huge && !c.huge || !c.want(m.key) && !c.wantJSON(m) && m.key != "small" {
			continue
		}
		if paths[m.key], err = storePath(c.dir, m.shape, logf); err != nil {
			return err
		}
	}
	small := paths["small"]
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
	for _, m := range measuredStores {
		if m.huge && !c.huge || !c.want(m.key) {
			continue
		}
		r, err := firstFrame(c, t, paths[m.key], m.shape, m.frame, m.rssKB)
		add("first frame, "+m.shape.String(), r, err)
	}
	if c.huge || c.only["claude"] {
		h := claudeHistory
		path, err := historyPath(c.dir, h, logf)
		if err == nil {
			var r row
			r, err = firstRows(c, t, path, target{h.String(), h.newestGoal(), anySession}, 200*time.Millisecond, 150<<10)
			add("first frame, "+h.String(), r, err)
			r, err = claudeLine(c, t, h, path)
			add("line appended to a live session → on screen, "+h.String(), r, err)
		} else {
			add("first frame, "+h.String(), row{}, err)
		}
	}
	if c.huge || c.only["codex"] {
		h := codexHistory
		path, err := codexTreePath(c.dir, h, logf)
		if err == nil {
			var r row
			r, err = firstRows(c, t, path, target{h.String(), h.newestGoal(), anySession}, 200*time.Millisecond, 150<<10)
			add("first frame, "+h.String(), r, err)
			r, err = codexLiveRow(c, t, path, h)
			add("line appended to a live session → on screen, "+h.String(), r, err)
		} else {
			add("first frame, "+h.String(), row{}, err)
		}
	}
	if c.huge || c.only["opencode"] {
		h := opencodeHistory
		path, err := opencodePath(c.dir, h, logf)
		if err == nil {
			var r row
			r, err = firstRows(c, t, path, target{h.String(), sessionMark(h.Sessions), anySession}, 200*time.Millisecond, 150<<10)
			add("first frame, "+h.String(), r, err)
			r, err = opencodeLive(c, t, path, h)
			add("line appended to a live session → on screen, "+h.String(), r, err)
		} else {
			add("first frame, "+h.String(), row{}, err)
		}
	}
	for _, m := range measuredStores {
		if m.huge && !c.huge || !c.wantJSON(m) {
			continue
		}
		rounds := c.rounds
		if m.huge {
			// One round: gigabytes are read from disk by both when the
			// page cache cannot hold them.
			rounds = 1
		}
		r, err := runsJSON(c, paths[m.key], m.shape, rounds)
		add("`vigil runs --json`, "+m.shape.String(), r, err)
	}
	if c.want("screen") {
		r, err := commitToScreen(c, t, small)
		add("commit → row on screen", r, err)
	}
	if c.want("serve") {
		r, err := commitToServe(c, t, small)
		add("commit → row on an ssh screen, vigil serve", r, err)
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
		fmt.Println("100 k runs / 10 M steps: not measured (opt in with -huge: the stores take minutes and 3–7.5 GB each to build once)")
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
	flaw   string  // what misses the goal whatever the figure
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
		if r.flaw != "" {
			mark = "misses: " + r.flaw
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
