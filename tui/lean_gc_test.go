package tui

import (
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/vigil-run/vigil/store"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// The lean collector holds while any read that asked for it is out, and
// the user's setting comes back when the last one is taken in, whatever
// the order, and only once however often a reply is let go.
func TestLeanGCComesBack(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	a, b := leanGC(), leanGC()
	if p := gcPercent(); p != leanGCPercent {
		t.Fatalf("GC percent %d while reading, want %d", p, leanGCPercent)
	}
	a()
	a()
	if p := gcPercent(); p != leanGCPercent {
		t.Fatalf("GC percent %d with one read still out, want %d", p, leanGCPercent)
	}
	b()
	if p := gcPercent(); p != 150 {
		t.Fatalf("GC percent %d after the reads, want the user's 150", p)
	}
	debug.SetGCPercent(20)
	c := leanGC()
	if p := gcPercent(); p != 20 {
		t.Fatalf("a leaner setting of the user's became %d", p)
	}
	c()
}

// A whole-list reply from a source since replaced is dropped, and still
// lets the collector go.
func TestLeanGCLetGoByADroppedReply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	d := newDriver(t, 80, 24)
	msg := restMsg{from: from{d.m.src.gen + 1}, leanHeld: leanHeld{leanGC()}}
	d.send(msg)
	if p := gcPercent(); p != 100 {
		t.Fatalf("GC percent %d after a dropped reply, want 100", p)
	}
}

// While the explorer holds a big run list the collector stays lean (the
// list is most of the heap: the default target let the garbage grow to
// twice it); a small list, and a closed explorer, leave the user's setting.
func TestLeanWhileTheListIsBig(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	d := newDriver(t, 80, 24)
	if p := gcPercent(); p != 100 {
		t.Fatalf("GC percent %d with a small store, want 100", p)
	}
	runs := func(n int) []store.Run {
		rs := make([]store.Run, n)
		for i := range rs {
			rs[i] = store.Run{ID: strconv.Itoa(n - i), Goal: "task", Status: store.StatusCompleted}
		}
		return rs
	}
	d.m.st.model.SetRuns(runs(leanRuns))
	d.m.refreshItems()
	if p := gcPercent(); p != leanGCPercent {
		t.Fatalf("GC percent %d holding %d runs, want %d", p, leanRuns, leanGCPercent)
	}
	d.m.refreshItems() // held once, not once a refresh
	d.m.st.model.SetRuns(runs(3))
	d.m.refreshItems()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GC percent %d after the list shrank, want 100", p)
	}
	d.m.st.model.SetRuns(runs(leanRuns))
	d.m.refreshItems()
	d.m.Close()
	if p := gcPercent(); p != 100 {
		t.Fatalf("GC percent %d after the explorer closed, want 100", p)
	}
}
