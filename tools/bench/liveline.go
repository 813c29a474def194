package main

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"
)

// lineToScreen times lines appended to a live session of an agent-CLI
// history to the screen. The explorer is started with argv (the history
// and the live session's run) and must show ready first; then, c.commits
// times at no fixed phase to the explorer's clock, appendLine(i) writes the
// i-th line the CLI would write, carrying marker, and says when its write
// returned. The figure is from then to the first screen showing marker.
func lineToScreen(c *config, t *term, label string, argv []string, ready string,
	appendLine func(i int) (marker string, at time.Time, err error)) (row, error) {
	if _, err := t.start(append([]string{c.vigil}, argv...)...); err != nil {
		return row{}, err
	}
	defer t.stop()
	if _, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, ready) }, 30*time.Second); !ok {
		return row{}, fmt.Errorf("the explorer on %s never showed %q:\n%s", label, ready, t.screen())
	}
	settled, err := settle(t.pid(), 60*time.Second)
	if err != nil {
		return row{}, fmt.Errorf("the explorer on %s: %w", label, err)
	}
	rng := rand.New(rand.NewSource(30))
	var ds []time.Duration
	for i := 0; i < c.commits; i++ {
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		marker, at, err := appendLine(i)
		if err != nil {
			return row{}, fmt.Errorf("appending line %d: %w", i, err)
		}
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, marker) }, 10*time.Second)
		if !ok {
			return row{}, fmt.Errorf("line %d (%s) never reached the screen:\n%s", i, marker, t.screen())
		}
		ds = append(ds, seen.Sub(at))
		if c.verbose && i == 0 {
			fmt.Fprintln(os.Stderr, t.screen())
		}
	}
	p99 := quantile(ds, 0.99)
	return row{figure: fmt.Sprintf("line appended to a live session → on screen, %s, p99 over %d lines", label, c.commits),
		now:    fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(ds, 0.5))),
		goal:   "≤ 25 ms",
		ratio:  float64(p99) / float64(25*time.Millisecond),
		detail: fmt.Sprintf("the explorer's start to idle (its counts read): %s; each line in turn: %s", settled.Round(100*time.Millisecond), joinMs(ds))}, nil
}

// settle waits for the process to go idle (under a tenth of a core over
// half a second: the history's counts read) and says how long it took.
func settle(pid int, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		cpu0 := procCPU(pid)
		time.Sleep(500 * time.Millisecond)
		if procCPU(pid)-cpu0 < 50*time.Millisecond {
			return time.Since(start), nil
		}
	}
	return 0, fmt.Errorf("still busy %s after the first frame", limit)
}
