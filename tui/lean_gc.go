package tui

import (
	"runtime/debug"
	"sync"
	"time"
)

// Reading a whole run list (100 k runs) and its counts builds rows while
// the model still holds the page drawn first: the heap peaks at about twice
// what stays live, because the garbage collector lets it grow by GOGC
// (100 %) before it runs. From the start of such a read until the model
// has taken its reply in, the collector runs at leanGCPercent, a little
// CPU for a lower peak (100 k runs / 10 M steps: 153 MB → 141–149 MB); it
// goes back to what it was after the last one, unless the model holds a
// big run list (holdLeanForList). (A memory limit would cut the peak too,
// but could keep the collector running without end on a store whose live
// rows exceed it.)
const leanGCPercent = 40

var lean struct {
	sync.Mutex
	n   int
	old int
}

// leanGC lowers the collector's target until the returned func is called,
// or for leanMax at most.
func leanGC() (restore func()) {
	release := leanHold()
	// A reply nobody takes in (a serve session that ended first) must not
	// keep the process lean for good.
	time.AfterFunc(leanMax, release)
	return release
}

// leanHold lowers the collector's target until the returned func is called
// (once counts; more calls do nothing).
func leanHold() (release func()) {
	lean.Lock()
	if lean.n == 0 {
		lean.old = debug.SetGCPercent(leanGCPercent)
		if lean.old < 0 || lean.old < leanGCPercent {
			debug.SetGCPercent(lean.old) // off, or already leaner: left as the user set it
		}
	}
	lean.n++
	lean.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			lean.Lock()
			if lean.n--; lean.n == 0 {
				debug.SetGCPercent(lean.old)
			}
			lean.Unlock()
		})
	}
}

// leanRuns is the run list from which the explorer keeps the collector
// lean for as long as it holds it. The list is then most of the live heap
// (100 k runs: 61–67 MB of it) and changes little, so the collector's
// default target (twice the live heap) only lets the session's garbage
// pile up to it: RSS grew from 111 to 192 MB within minutes of the lean
// read ending on the 10 M-step store. Lean, a collection comes once the
// garbage is 40 % of the list, minutes apart at rest. A session with a
// small list (a run of a million steps streaming in) allocates fast and
// keeps the default.
const leanRuns = 10_000

// holdLeanForList keeps the collector lean while the model holds a big
// run list (leanRuns), and lets it go when the list shrinks or the model
// closes.
func (m *Model) holdLeanForList() {
	big := !m.closed && m.st.model.Len() >= leanRuns
	switch {
	case big && m.leanList == nil:
		m.leanList = leanHold()
	case !big && m.leanList != nil:
		m.leanList()
		m.leanList = nil
	}
}

// leanMax is the longest one read keeps the collector lean.
const leanMax = time.Minute

// leanHeld is carried by a reply whose read runs with a lean collector: the
// model lets it go once it has taken the reply in (Update).
type leanHeld struct{ done func() }

type leanReply interface{ releaseLean() }

func (l leanHeld) releaseLean() {
	if l.done != nil {
		l.done()
	}
}
