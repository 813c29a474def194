package views

import "github.com/vigil-run/vigil/internal/rev"

// A pane's revision moves whenever what it draws may have changed, so the
// root keeps its last drawing of a pane until the revision moves (tui's
// pane cache) and never has to be told. Every method that changes a pane's
// state bumps it first thing; what a pane reads as it draws and does not
// own (the open agent's steps, the run model behind the tree's nodes)
// carries a revision of its own, which the pane folds into its own as it
// is asked (pane_rev_test drives every method of every pane and fails on a
// drawing that changed under the same revision).

// revision is embedded in every pane: bump is the pane's only way to say
// its drawing changed, Rev the Pane method that reads it.
type revision struct{ r rev.Rev }

func (v *revision) bump() { v.r.Bump() }

// Rev is the pane's revision: it moves with every change to what it draws.
func (v *revision) Rev() uint64 { return v.r.Rev() }

// Revised is data a pane reads as it draws, held and changed by its owner:
// its Rev moves with every change.
type Revised interface {
	Rev() uint64
}

// track bumps v when src's revision moved since last seen: a pane that
// draws from src calls it from its Rev, before reading its own.
func (v *revision) track(seen *rev.Seen, src Revised) {
	if src != nil && seen.Moved(src.Rev()) {
		v.bump()
	}
}
