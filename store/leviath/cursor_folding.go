package leviath

import (
	"os"
	"path/filepath"
	"sort"
)

// A cursor made while runs are being folded (folding.go) says which, and
// what the reader has of each: the run's row from meta.json and none of
// its journal. The cursor keeps that whatever happens before it is
// written down (vigil agent's Head and Changes take the store's lock
// once for the cursor and again for its written form, and a fold may be
// put in place between), so that:
//   - a fold put in place after the cursor is never taken for the
//     reader's: the run comes whole after it, rows and all;
//   - coming whole is no write only up to what the store held then: a
//     frame that ends past the journal's size then, or a newer meta.json,
//     was written after the cursor.

// foldMark is what a reader has of a run it was given while the run was
// being folded.
type foldMark struct {
	Off  int64 `json:"off"`  // the journal's size then (-1: not known, a cursor of an older vigil)
	Meta int64 `json:"meta"` // meta.json's updated_at then
}

// foldMarkOf is what a reader given rs now has of it (s.mu held, rs
// pending). A journal that cannot be stated is taken as read to where the
// fold reads (its size at open).
func foldMarkOf(rs *runState) foldMark {
	m := foldMark{Off: rs.foldTo, Meta: rs.fmeta.UpdatedAt}
	if fi, err := os.Stat(filepath.Join(rs.dir, "run.lvr")); err == nil {
		m.Off = fi.Size()
	}
	return m
}

// liveCursor is a cursor at the end of the log (s.mu held) that names the
// runs still being folded: with their marks in had when there (what the
// reader was given before), as they are now otherwise.
func (s *Store) liveCursor(had map[string]foldMark) *Cursor {
	c := &Cursor{src: s, seq: s.seq}
	for _, rs := range s.deferred {
		if !rs.pending || s.runs[rs.id] != rs {
			continue
		}
		if c.folding == nil {
			c.folding = map[string]foldMark{}
		}
		if m, ok := had[rs.id]; ok {
			c.folding[rs.id] = m
		} else {
			c.folding[rs.id] = foldMarkOf(rs)
		}
	}
	return c
}

// writtenSince says whether rs, given whole to a reader that had fm of it
// while it was being folded, holds what was written after: a frame ending
// past the journal's size then, or a newer meta.json.
func writtenSince(rs *runState, fm foldMark) bool {
	if fm.Off < 0 {
		return false // an older vigil's cursor: not known, taken as no write
	}
	return rs.off > fm.Off || (rs.hasFMeta && rs.fmeta.UpdatedAt > fm.Meta)
}

// wireFolding is folding as written down: the ids (what an older vigil
// reads) and the marks.
func wireFolding(f map[string]foldMark) ([]string, map[string]foldMark) {
	if len(f) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(f))
	for id := range f {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, f
}

// readFolding is wireFolding read back: an id without marks (an older
// vigil's cursor) is not known.
func readFolding(ids []string, at map[string]foldMark) map[string]foldMark {
	if len(ids) == 0 {
		return nil
	}
	f := make(map[string]foldMark, len(ids))
	for _, id := range ids {
		m, ok := at[id]
		if !ok {
			m = foldMark{Off: -1}
		}
		f[id] = m
	}
	return f
}
