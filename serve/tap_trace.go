//go:build vigiltrace

package serve

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// With -tags vigiltrace and $VIGIL_FRAME_TAP a directory, each session's
// own screen keeps what it wrote, with when each write finished, and
// writes it to that directory when the session ends (tap-N.bin: records of
// the time in Unix nanoseconds and the length, 8 and 4 bytes little-endian,
// then the bytes). Kept in memory until then, and a frame's string is kept
// as it is (draw's builder starts a new buffer each frame), so that the tap
// costs the server an append of a time and a string a frame. Never in a
// release build.
func init() {
	if dir := os.Getenv("VIGIL_FRAME_TAP"); dir != "" {
		frameTap = &fileTap{dir: dir, recs: map[any][]tapRec{}}
	}
	libraryRenderer = os.Getenv("VIGIL_SERVE_RENDERER") == "bubbletea"
}

type fileTap struct {
	dir  string
	n    atomic.Int64
	mu   sync.Mutex
	recs map[any][]tapRec
}

type tapRec struct {
	at int64
	b  string
}

func (t *fileTap) wrote(s any, at time.Time, b string) {
	t.mu.Lock()
	t.recs[s] = append(t.recs[s], tapRec{at.UnixNano(), b})
	t.mu.Unlock()
}

func (t *fileTap) ended(s any) {
	t.mu.Lock()
	recs, ok := t.recs[s]
	delete(t.recs, s)
	t.mu.Unlock()
	if !ok {
		return
	}
	var buf []byte
	for _, r := range recs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(r.at))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(r.b)))
		buf = append(buf, r.b...)
	}
	name := filepath.Join(t.dir, fmt.Sprintf("tap-%d.bin", t.n.Add(1)))
	// Whole or not at all: the reader lists the directory.
	if err := os.WriteFile(name+".part", buf, 0o600); err == nil {
		os.Rename(name+".part", name)
	}
}
