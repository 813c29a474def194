package main

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"time"
)

// lineToScreen times lines appended to a live session of an agent-CLI
// history to the screen. The explorer is started with argv (the history
// and the live session's run) and must show ready first. Then, at no
// fixed phase to the explorer's clock (every 20–80 ms), appendLine(i)
// writes the i-th line the CLI would write, carrying marker, and says when
// its write returned; each is timed from then to the first screen showing
// marker. Lines are appended from the first frame on, while the explorer
// still reads the history's counts (those go in the detail), and then
// c.commits more once it is idle: the figure.
func lineToScreen(c *config, t *term, label string, argv []string, ready string,
	appendLine func(i int) (marker string, at time.Time, err error)) (row, error) {
	if _, err := t.start(append([]string{c.vigil}, argv...)...); err != nil {
		return row{}, err
	}
	defer t.stop()
	if _, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, ready) }, 30*time.Second); !ok {
		return row{}, fmt.Errorf("the explorer on %s never showed %q:\n%s", label, ready, t.screen())
	}
	start := time.Now()
	idle := watchIdle(t.pid())
	rng := rand.New(rand.NewSource(30))
	var busy, ds []time.Duration
	var settled time.Duration
	for i := 0; len(ds) < c.commits; i++ {
		if time.Since(start) > 2*time.Minute && settled == 0 {
			return row{}, fmt.Errorf("the explorer on %s was still busy 2 minutes after its first frame", label)
		}
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		quiet := idle()
		if quiet && settled == 0 {
			settled = time.Since(start)
		}
		marker, at, err := appendLine(i)
		if err != nil {
			return row{}, fmt.Errorf("appending line %d: %w", i, err)
		}
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, marker) }, 10*time.Second)
		if !ok {
			return row{}, fmt.Errorf("line %d (%s) never reached the screen:\n%s", i, marker, t.screen())
		}
		if c.verbose && i == 0 {
			fmt.Fprintln(os.Stderr, t.screen())
		}
		if quiet {
			ds = append(ds, seen.Sub(at))
		} else {
			busy = append(busy, seen.Sub(at))
		}
	}
	p99 := quantile(ds, 0.99)
	r := row{figure: fmt.Sprintf("line appended to a live session → on screen, %s, p99 over %d lines", label, c.commits),
		now:   fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(ds, 0.5))),
		goal:  "≤ 25 ms",
		ratio: float64(p99) / float64(25*time.Millisecond)}
	r.detail = fmt.Sprintf("the explorer read the history's counts for %s after its first frame", settled.Round(100*time.Millisecond))
	if len(busy) > 0 {
		r.detail += fmt.Sprintf("; the %d lines appended meanwhile: p99 %s, p50 %s", len(busy), ms(quantile(busy, 0.99)), ms(quantile(busy, 0.5)))
	}
	r.detail += "; once idle, each line in turn: " + joinMs(ds)
	return r, nil
}

// watchIdle samples a process's CPU every half second; the function it
// returns says whether the last half second used under a third of a core
// (following the lines appended, not reading the history).
func watchIdle(pid int) func() bool {
	var mu sync.Mutex
	quiet := false
	go func() {
		for {
			cpu0 := procCPU(pid)
			time.Sleep(500 * time.Millisecond)
			used := procCPU(pid) - cpu0
			if procKB(pid, "VmRSS") == 0 {
				return // the process is gone
			}
			mu.Lock()
			quiet = used < 160*time.Millisecond
			mu.Unlock()
			if used < 160*time.Millisecond {
				return // idle once is idle: its counts are read
			}
		}
	}()
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return quiet
	}
}
