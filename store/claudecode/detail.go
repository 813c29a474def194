package claudecode

import (
	"os"

	"github.com/vigil-run/vigil/store"
)

// recentKept is how many completed turns the detail cache keeps: a tail
// follows the newest step, and its neighbours are a key away.
const recentKept = 16

// detailFold is one transcript's whole-text fold as far as it was read,
// with its newest completed turns, so that the detail of a step of a live
// session is read from where the last one stopped instead of from the
// transcript's start. One transcript is kept: the one on screen.
type detailFold struct {
	path   string
	ino    uint64
	off    int64
	fold   fold
	recent []*turn
}

// recentDetail is the detail of the turn with row id rowID when the cached
// fold of path, read on to the end, holds it.
func (s *Store) recentDetail(path, runID string, rowID int64) (store.StepDetail, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.StepDetail{}, false
	}
	s.detailMu.Lock()
	defer s.detailMu.Unlock()
	d := s.detail
	if d == nil || d.path != path || d.ino != store.Inode(fi) || fi.Size() < d.off {
		d = &detailFold{path: path, ino: store.Inode(fi), fold: fold{keep: store.MaxDetailBytes}}
	}
	var asked *turn // met on the way: a fold from the start passes every turn
	off, err := readLines(path, d.off, func(l []byte) {
		s.report(path, d.fold.feed(l, func(t *turn) {
			if t.row == rowID || t.commit == rowID {
				asked = t
			}
			if d.recent = append(d.recent, t); len(d.recent) > recentKept {
				d.recent = d.recent[1:]
			}
		}))
	})
	if err != nil {
		s.detail = nil
		return store.StepDetail{}, false
	}
	d.off = off
	s.detail = d
	if asked != nil {
		return asked.detail(runID), true
	}
	if t := d.fold.open; t != nil && t.row == rowID {
		return t.detail(runID), true
	}
	for _, t := range d.recent {
		if t.row == rowID || t.commit == rowID {
			return t.detail(runID), true
		}
	}
	return store.StepDetail{}, false
}
