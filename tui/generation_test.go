package tui

import (
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// A read still in flight when the store is reopened answers for the old
// source: its rows and its cursor are not the new source's, so it is
// dropped, and the refresh it held does not block the next one.
func TestRepliesFromAReplacedSourceAreDropped(t *testing.T) {
	d := newDriver(t, 120, 40)
	ghost := store.Run{ID: "999", Goal: "read from the old store", Status: store.StatusRunning}
	stale := changesMsg{from: from{d.m.src.gen}, ch: &store.Changes{Runs: []store.Run{ghost}}}
	d.m.refreshing = true // that refresh is the one in flight

	src, err := ioharness.Open(d.path)
	if err != nil {
		t.Fatal(err)
	}
	d.send(reopenedMsg{src: store.Complete(src)})
	if d.m.src.gen != 1 || !d.m.loaded || d.m.cursor == nil {
		t.Fatalf("after the reopen: generation %d, loaded %v, cursor %v", d.m.src.gen, d.m.loaded, d.m.cursor)
	}
	cur := d.m.cursor
	d.send(stale)
	if _, folded := d.m.st.model.Run(ghost.ID); folded || d.m.cursor != cur {
		t.Fatal("a reply read from the replaced source was folded in")
	}
	if d.m.refreshing || d.m.askRefresh() == nil {
		t.Fatal("the refresh in flight on the old source still blocks refreshing")
	}

	// The same reply from the source now open is folded in.
	d.send(changesMsg{from: from{d.m.src.gen}, ch: &store.Changes{Runs: []store.Run{ghost}}, next: cur})
	if _, folded := d.m.st.model.Run(ghost.ID); !folded {
		t.Fatal("a current reply was dropped")
	}
}
