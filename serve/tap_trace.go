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
// then the bytes). Kept in memory until then, so that the tap costs the
// server a copy a frame, not a file write. Never in a release build.
func init() {
	if dir := os.Getenv("VIGIL_FRAME_TAP"); dir != "" {
		frameTap = &fileTap{dir: dir, bufs: map[*lineScreen][]byte{}}
	}
}

type fileTap struct {
	dir  string
	n    atomic.Int64
	mu   sync.Mutex
	bufs map[*lineScreen][]byte
}

func (t *fileTap) wrote(s *lineScreen, at time.Time, b string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := t.bufs[s]
	buf = binary.LittleEndian.AppendUint64(buf, uint64(at.UnixNano()))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(b)))
	t.bufs[s] = append(buf, b...)
}

func (t *fileTap) ended(s *lineScreen) {
	t.mu.Lock()
	buf, ok := t.bufs[s]
	delete(t.bufs, s)
	t.mu.Unlock()
	if !ok {
		return
	}
	name := filepath.Join(t.dir, fmt.Sprintf("tap-%d.bin", t.n.Add(1)))
	// Whole or not at all: the reader lists the directory.
	if err := os.WriteFile(name+".part", buf, 0o600); err == nil {
		os.Rename(name+".part", name)
	}
}
