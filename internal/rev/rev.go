// Package rev hands out revisions: numbers that only grow, one per change
// to something drawn (a pane, the data a pane reads as it draws). Drawn
// from one counter, no two changes anywhere share a revision, so a holder
// replaced by a new one (a store opened again) never repeats the revision
// of the one it replaced, and "the revision moved" means "it changed".
package rev

import "sync/atomic"

var last atomic.Uint64

// Next is a revision later than every one handed out before.
func Next() uint64 { return last.Add(1) }

// Rev is a holder's revision. Embedded in what is drawn, its Bump is the
// one way to say the drawing changed.
type Rev struct{ n uint64 }

// Bump gives the holder a new revision.
func (r *Rev) Bump() { r.n = Next() }

// Rev is the holder's revision: it moves with every Bump.
func (r *Rev) Rev() uint64 { return r.n }

// Seen tracks the revision of something a holder reads as it draws.
type Seen struct{ n uint64 }

// Moved says whether v is not the revision last seen, and remembers it.
func (s *Seen) Moved(v uint64) bool {
	moved := v != s.n
	s.n = v
	return moved
}
