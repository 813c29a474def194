package main

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// lineToScreen starts the explorer with argv, waits for ready on screen,
// then c.commits times calls appendLine(i) at a random 20–80 ms interval
// and times each line from when its write committed (at) to the first
// screen showing its marker: p99 and p50.
func lineToScreen(c *config, t *term, label string, argv []string, ready string,
	appendLine func(i int) (marker string, at time.Time, err error)) (row, error) {
	if _, err := t.start(append([]string{c.vigil}, argv...)...); err != nil {
		return row{}, err
	}
	defer t.stop()
	if _, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, ready) }, 30*time.Second); !ok {
		return row{}, fmt.Errorf("the explorer never showed %q:\n%s", ready, t.screen())
	}
	rng := rand.New(rand.NewSource(30))
	var ds []time.Duration
	for i := 0; i < c.commits; i++ {
		// Lines at no fixed phase to the explorer's tick or the writer's.
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		marker, at, err := appendLine(i)
		if err != nil {
			return row{}, err
		}
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, marker) }, 10*time.Second)
		if !ok {
			return row{}, fmt.Errorf("line %d never reached the screen:\n%s", i, t.screen())
		}
		ds = append(ds, seen.Sub(at))
	}
	p99 := quantile(ds, 0.99)
	return row{figure: fmt.Sprintf("a line appended to a live session → on screen, %s, p99 over %d", label, c.commits),
		now: fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(ds, 0.5))), goal: "≤ 25 ms", ratio: float64(p99) / float64(25*time.Millisecond)}, nil
}
