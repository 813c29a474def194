package leviath

import (
	"os"
	"path/filepath"
)

// A step's detail is read back from its frame (readEntry), and several
// rows come from one frame: an assistant turn and the tool result that
// answers it are one Progress frame, and a result's detail also reads its
// turn's call (callFor). `show --json` reads every row in order, so without
// a memo each frame was read and decoded three times: 3 GB of JSON for a
// 1 GB journal. The last frame decoded is kept, so the rows after it that
// come from the same frame decode nothing.
//
// The memo is keyed by the journal's identity and state as a Stat gives
// them (device, inode, size, modification time) and the frame's offset:
// an append, a rewrite or a replacement of run.lvr is a miss. Only a
// small decoded frame is kept (a long frame is a skeleton of cut strings,
// so this holds for nearly every frame), so it costs at most one such
// frame of memory between reads.

// frameMemoMax is the largest payload the memo keeps.
const frameMemoMax = 4 << 20

type frameKey struct {
	path     string
	dev, ino uint64
	size     int64
	mtime    int64
	off      int64
}

type frameMemo struct {
	key     frameKey
	rec     *runRecord // nil: nothing kept
	decodes int64      // frames decoded for details so far (tests and benchmarks read it)
}

func frameKeyOf(rs *runState, fi os.FileInfo, off int64) frameKey {
	return frameKey{
		path:  filepath.Join(rs.dir, "run.lvr"),
		dev:   deviceOf(fi),
		ino:   inodeOf(fi),
		size:  fi.Size(),
		mtime: fi.ModTime().UnixNano(),
		off:   off,
	}
}

// get is the frame decoded under k, if it is the one kept.
func (m *frameMemo) get(k frameKey) (*runRecord, bool) {
	if m.rec == nil || m.key != k {
		return nil, false
	}
	return m.rec, true
}

// put keeps rec, decoded from a payload of n bytes, under k (or forgets
// the frame kept when rec is too big to keep).
func (m *frameMemo) put(k frameKey, rec *runRecord, n int) {
	m.decodes++
	if n > frameMemoMax {
		m.key, m.rec = frameKey{}, nil
		return
	}
	m.key, m.rec = k, rec
}
