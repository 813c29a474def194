package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// emptyStore is what the runs pane says of a store with no runs: on a
// store that has runs, a frame saying it is a false one.
const emptyStore = "no runs in this store"

// firstFrame starts the real binary in tmux, rounds times, each a fresh
// process, and times it from the moment tmux is asked to start it to the
// first screen that shows the runs list (the newest root's goal in its
// row), and notes a false empty frame on the way. rssGoalKB, when set,
// adds the peak RSS over the first three seconds (the counts arrive after
// the first frame): the highest of the rounds in the figure, each round's
// in the detail. With -before, the other build runs in turn with it, round
// by round, and the detail compares the two.
func firstFrame(c *config, t *term, path string, s shape, goal time.Duration, rssGoalKB int64) (row, error) {
	return firstRows(c, t, path, target{s.String(), fmt.Sprintf("task %d: refactor", newestRoot(s)), anyGoal}, goal, rssGoalKB)
}

// target is what a first frame waits for: the newest root's goal (marker);
// a screen showing another goal (any) without it listed other runs first.
type target struct {
	label, marker string
	any           *regexp.Regexp
}

func firstRows(c *config, t *term, path string, tg target, goal time.Duration, rssGoalKB int64) (row, error) {
	now, before := &frames{}, &frames{}
	for i := 0; i < c.rounds; i++ {
		if err := now.round(c, t, c.vigil, path, tg, rssGoalKB > 0, i == 0); err != nil {
			return row{}, err
		}
		if c.before != "" {
			if err := before.round(c, t, c.before, path, tg, rssGoalKB > 0, false); err != nil {
				return row{}, fmt.Errorf("-before: %w", err)
			}
		}
	}
	best := quantile(now.ds, 0)
	r := row{figure: "first frame, " + tg.label, now: now.String(),
		goal: "≤ " + ms(goal), ratio: float64(best) / float64(goal)}
	if now.wrongTop != "" {
		r.flaw = "a frame listed other runs before the newest"
		if c.verbose {
			fmt.Fprintln(os.Stderr, now.wrongTop)
		}
	}
	if now.falseEmpty != "" {
		r.flaw = strings.TrimPrefix(r.flaw+"; ", "; ") + "a frame said the store has no runs"
		if c.verbose {
			fmt.Fprintln(os.Stderr, now.falseEmpty)
		}
	}
	if rssGoalKB > 0 {
		// The bound holds in every run, so the figure is the highest.
		r.goal += fmt.Sprintf(", ≤ %d MB", rssGoalKB>>10)
		r.ratio = max(r.ratio, float64(slices.Max(now.peaks))/float64(rssGoalKB))
		r.detail = "peak RSS of each round: " + now.eachPeak()
	}
	if c.before != "" {
		r.detail = strings.TrimPrefix(r.detail+"; ", "; ") + fmt.Sprintf("before, in turn: %s; best %.2f× before's", before, float64(best)/float64(quantile(before.ds, 0)))
		if rssGoalKB > 0 {
			r.detail += ", peak RSS of each round " + before.eachPeak()
		}
		if before.falseEmpty != "" {
			r.detail += "; before showed a false empty frame"
		}
		if before.wrongTop != "" {
			r.detail += "; before listed other runs before the newest"
		}
	}
	return r, nil
}

// frames is one build's first frames on one store.
type frames struct {
	ds         []time.Duration
	peaks      []int64 // each round's, kB
	falseEmpty string  // a screen that said the store has no runs
	wrongTop   string  // a screen that listed runs without the newest
}

// anyGoal is a run's goal as the bench's stores write it: a screen that
// lists runs but not the newest root put other runs first.
var anyGoal = regexp.MustCompile(`task \d+: refactor`)

func (f *frames) round(c *config, t *term, bin, path string, tg target, rss, show bool) error {
	at, err := t.start(bin, "--store", path)
	if err != nil {
		return err
	}
	seen, ok := t.waitFor(func(sc string) bool {
		if strings.Contains(sc, emptyStore) && f.falseEmpty == "" {
			f.falseEmpty = sc
		}
		if strings.Contains(sc, tg.marker) {
			return true
		}
		if tg.any.MatchString(sc) && f.wrongTop == "" {
			f.wrongTop = sc
		}
		return false
	}, 30*time.Second)
	if !ok {
		sc := t.screen()
		t.stop()
		return fmt.Errorf("first frame on %s: the runs list never showed %q; the screen:\n%s", tg.label, tg.marker, sc)
	}
	f.ds = append(f.ds, seen.Sub(at))
	if c.verbose && show {
		fmt.Fprintln(os.Stderr, t.screen())
	}
	if rss {
		time.Sleep(3 * time.Second)
		f.peaks = append(f.peaks, procKB(t.pid(), "VmHWM"))
	}
	t.stop()
	return nil
}

func (f *frames) String() string {
	out := fmt.Sprintf("%s (median %s)", ms(quantile(f.ds, 0)), ms(quantile(f.ds, 0.5)))
	if len(f.peaks) > 0 {
		out += fmt.Sprintf(", peak RSS %d MB", slices.Max(f.peaks)>>10)
	}
	return out
}

func (f *frames) eachPeak() string {
	var each []string
	for _, kb := range f.peaks {
		each = append(each, strconv.FormatInt(kb>>10, 10))
	}
	return strings.Join(each, " ") + " MB"
}

// runsJSON times `vigil runs --json` and C SQLite's one-pass GROUP BY
// over the same steps (the sqlite3 CLI), alternately, rounds times each.
// Both are measured as they come, page cache and all: a store bigger than
// the cache is read from disk by both.
func runsJSON(c *config, path string, s shape, rounds int) (row, error) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		return row{}, fmt.Errorf("the C SQLite floor needs the sqlite3 CLI")
	}
	floorQ := "SELECT run_id, COUNT(*), SUM(tokens), MAX(step) FROM steps GROUP BY run_id"
	var vs, fs, bs []time.Duration
	for i := 0; i < rounds; i++ {
		d, err := timed(exec.Command(c.vigil, "runs", "--json", "--store", path))
		if err != nil {
			return row{}, fmt.Errorf("vigil runs --json: %v", err)
		}
		vs = append(vs, d)
		if c.before != "" {
			d, err := timed(exec.Command(c.before, "runs", "--json", "--store", path))
			if err != nil {
				return row{}, fmt.Errorf("-before runs --json: %v", err)
			}
			bs = append(bs, d)
		}
		if d, err = timed(exec.Command(sqlite, "-readonly", path, floorQ)); err != nil {
			return row{}, fmt.Errorf("sqlite3: %v", err)
		}
		fs = append(fs, d)
	}
	v, f := quantile(vs, 0), quantile(fs, 0)
	x := float64(v) / float64(f)
	r := row{figure: "`vigil runs --json`, " + s.String() + " ÷ C SQLite's one-pass GROUP BY",
		now: fmt.Sprintf("%s ÷ %s = %.1f×", ms(v), ms(f), x), goal: "≤ 3×", ratio: x / 3,
		detail: fmt.Sprintf("medians %s ÷ %s", ms(quantile(vs, 0.5)), ms(quantile(fs, 0.5)))}
	if c.before != "" {
		b := quantile(bs, 0)
		r.detail += fmt.Sprintf("; before, in turn: %s = %.1f× (median %s)", ms(b), float64(b)/float64(f), ms(quantile(bs, 0.5)))
	}
	return r, nil
}

// timed runs a command to the end, its output to a file, and returns how
// long it took.
func timed(cmd *exec.Cmd) (time.Duration, error) {
	out, err := os.CreateTemp("", "vigil-bench-out-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return time.Since(start), nil
}

// copyStore copies a built store (checkpointed, no process has it open)
// for a measurement that writes to it.
func copyStore(c *config, src, name string) (string, error) {
	return copyFile(src, filepath.Join(c.work, name))
}

func copyFile(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// The run the writers append to: the small store's open root, which the
// explorer shows first.
const liveRun = 11

var liveFirstStep = smallShape.Steps/smallShape.Runs + 1

// startOnRun starts the explorer on a copy of the small store, its live run
// on screen, and waits for the runs list.
func startOnRun(c *config, t *term, path string) error {
	if _, err := t.start(c.vigil, "--store", path, "--run", strconv.Itoa(liveRun)); err != nil {
		return err
	}
	marker := fmt.Sprintf("task %d: refactor", newestRoot(smallShape))
	if _, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, marker) }, 30*time.Second); !ok {
		return fmt.Errorf("the explorer never showed the runs list:\n%s", t.screen())
	}
	return nil
}

// commitToScreen times each of c.commits foreign commits of a step to the
// run on screen, from the writer's COMMIT returning to the first screen
// that shows the step's row.
func commitToScreen(c *config, t *term, small string) (row, error) {
	path, err := copyStore(c, small, "screen.sqlite3")
	if err != nil {
		return row{}, err
	}
	w, err := startWriter(path, liveRun)
	if err != nil {
		return row{}, err
	}
	defer w.close()
	if err := startOnRun(c, t, path); err != nil {
		return row{}, err
	}
	defer t.stop()
	rng := rand.New(rand.NewSource(15))
	var ds []time.Duration
	for i := 0; i < c.commits; i++ {
		// Commits at no fixed phase to the explorer's tick or the writer's.
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		text := fmt.Sprintf("mark%04d", i)
		at, err := w.steps(liveRun, liveFirstStep+i, 1, text)
		if err != nil {
			return row{}, err
		}
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, text) }, 10*time.Second)
		if !ok {
			return row{}, fmt.Errorf("commit %d never reached the screen:\n%s", i, t.screen())
		}
		ds = append(ds, seen.Sub(at))
	}
	p99 := quantile(ds, 0.99)
	return row{figure: fmt.Sprintf("commit by a C-SQLite writer → row on screen, p99 over %d commits", c.commits),
		now: fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(ds, 0.5))), goal: "≤ 25 ms", ratio: float64(p99) / float64(25*time.Millisecond)}, nil
}

// commitToTail times c.commits foreign commits to the line vigil tail
// prints for each.
func commitToTail(c *config, small string) (row, error) {
	path, err := copyStore(c, small, "tail.sqlite3")
	if err != nil {
		return row{}, err
	}
	w, err := startWriter(path, liveRun)
	if err != nil {
		return row{}, err
	}
	defer w.close()
	cmd := exec.Command(c.vigil, "tail", strconv.Itoa(liveRun), "--store", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return row{}, err
	}
	if err := cmd.Start(); err != nil {
		return row{}, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	type line struct {
		text string
		at   time.Time
	}
	lines := make(chan line, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- line{sc.Text(), time.Now()}
		}
		close(lines)
	}()
	// tail prints the run so far first: wait for its last step.
	time.Sleep(300 * time.Millisecond)
	rng := rand.New(rand.NewSource(16))
	var ds []time.Duration
	for i := 0; i < c.commits; i++ {
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		text := fmt.Sprintf("mark%04d", i)
		at, err := w.steps(liveRun, liveFirstStep+i, 1, text)
		if err != nil {
			return row{}, err
		}
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return row{}, fmt.Errorf("vigil tail ended before commit %d", i)
				}
				if strings.Contains(l.text, text) {
					ds = append(ds, l.at.Sub(at))
					break wait
				}
			case <-timeout:
				return row{}, fmt.Errorf("commit %d never reached vigil tail", i)
			}
		}
	}
	p99 := quantile(ds, 0.99)
	return row{figure: "commit → `vigil tail` line, p99", now: fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(ds, 0.5))),
		goal: "≤ 10 ms", ratio: float64(p99) / float64(10*time.Millisecond)}, nil
}

// liveAppend appends c.appendN steps to the run on screen, a thousand a
// commit as fast as the writer can, sampling the explorer's RSS every
// 20 ms; after each tenth it commits a marked step alone and times it to
// the screen (flat frame time: the last tenth as fast as the first).
func liveAppend(c *config, t *term, small string) (row, error) {
	path, err := copyStore(c, small, "append.sqlite3")
	if err != nil {
		return row{}, err
	}
	w, err := startWriter(path, liveRun)
	if err != nil {
		return row{}, err
	}
	defer w.close()
	if err := startOnRun(c, t, path); err != nil {
		return row{}, err
	}
	defer t.stop()
	pid := t.pid()
	var mu sync.Mutex
	var peakRSS int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			kb := procKB(pid, "VmRSS")
			mu.Lock()
			peakRSS = max(peakRSS, kb)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	cpu0 := procCPU(pid)
	step := liveFirstStep
	const batch = 1000
	var marks []time.Duration
	tenth := max(batch, c.appendN/10)
	mark := func(k int) error {
		text := fmt.Sprintf("mark%04d", k)
		at, err := w.steps(liveRun, step, 1, text)
		if err != nil {
			return err
		}
		step++
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, text) }, 30*time.Second)
		if !ok {
			return fmt.Errorf("the explorer fell behind: the marked step %d was not on screen 30 s after its commit (%d of %s steps appended):\n%s",
				k, step-liveFirstStep, count(c.appendN), t.screen())
		}
		marks = append(marks, seen.Sub(at))
		return nil
	}
	if err := mark(0); err != nil {
		return row{}, err
	}
	for done := 0; done < c.appendN; {
		n := min(batch, c.appendN-done)
		if _, err := w.steps(liveRun, step, n, ""); err != nil {
			return row{}, err
		}
		step += n
		done += n
		if done%tenth == 0 || done == c.appendN {
			if err := mark(len(marks)); err != nil {
				return row{}, err
			}
		}
	}
	wrote := time.Since(start)
	cpu := procCPU(pid) - cpu0
	time.Sleep(time.Second)
	close(stop)
	<-sampled
	last := marks[len(marks)-1]
	r := row{figure: fmt.Sprintf("tailing one run while %s steps are appended live", count(c.appendN)),
		now:   fmt.Sprintf("peak RSS %d MB; commit → screen %s at the end (%s at the start)", peakRSS>>10, ms(last), ms(marks[0])),
		goal:  "RSS ≤ 150 MB, ≤ 25 ms at the end",
		ratio: max(float64(peakRSS)/float64(150<<10), float64(last)/float64(25*time.Millisecond)),
		detail: fmt.Sprintf("appended in %s (vigil's CPU meanwhile, user + system: %s); commit → screen after each tenth: %s",
			wrote.Round(100*time.Millisecond), cpu.Round(10*time.Millisecond), joinMs(marks))}
	return r, nil
}

func joinMs(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%.0f", float64(d.Microseconds())/1000))
	}
	return strings.Join(s, " ") + " ms"
}

// procCPU is a process's user + system CPU time so far (/proc/PID/stat,
// in clock ticks of 1/100 s).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:] // the command name may hold spaces
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// procKB reads a kB field (VmRSS, VmHWM) of a process's status.
func procKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func numCPU() int { return runtime.NumCPU() }
