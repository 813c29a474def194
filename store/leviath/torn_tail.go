package leviath

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A journal's last frame that runs past the end of the file is read again
// on every refresh: the writer may be mid-append. Once the run's own facts
// say nothing will append to it again, the frame is torn for good, and a
// row and Problems say so instead of waiting for ever.
//
// Leviath's writer (append_record in leviath-runtime's
// persistence_bridge.rs) ignores a failed or short write_all and goes on,
// so a torn frame is not only a crash's; what tells that no more bytes
// come is is_terminal_run there (complete, error, cancelled: "no further
// snapshots expected"; complete_interactive stays live), or an owner
// process on this machine that is gone (store.LivenessOf: Dead).

// noteTornTail adds the row once the writer of a torn last frame is gone.
func (s *Store) noteTornTail(rs *runState) {
	if rs.tornAt < 0 || rs.badNoted || rs.tornNotedAt == rs.tornAt || rs.pending || rs.jerr != nil {
		return
	}
	why := s.writerGone(rs)
	if why == "" {
		return
	}
	rs.tornNotedAt = rs.tornAt
	rs.addSlotNote(&s.ledger, slotTorn, fmt.Sprintf("journal: the last frame, at byte %d, %s, and %s: the tail is torn and what it held is not shown",
		rs.tornAt, tornFrame(filepath.Join(rs.dir, "run.lvr"), rs.tornAt, rs.lvr.size), why))
}

// writerGone says why nothing will append to the run's journal again, or
// "" while something may.
func (s *Store) writerGone(rs *runState) string {
	m, ok := rs.meta()
	if !ok {
		return ""
	}
	if terminalStatus(m.Status) {
		return "the run is " + m.Status + " (Leviath writes nothing more to it)"
	}
	if l := s.lease(rs, m); l != nil && store.LivenessOf(l, true, time.Now()) == store.Dead {
		return fmt.Sprintf("its writer, process %d, is gone", l.OwnerPID())
	}
	return ""
}

// tornFrame says what the frame at off holds of itself in a file of size
// bytes: "promises 4096 bytes and 10 are there".
func tornFrame(path string, off, size int64) string {
	have := size - off
	if have < 8 {
		return fmt.Sprintf("has %d of its 8 length bytes", max(have, 0))
	}
	f, err := openFile(path)
	if err != nil {
		return "is incomplete"
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return "is incomplete"
	}
	return fmt.Sprintf("promises %d bytes and %d are there", binary.BigEndian.Uint64(b[:]), have-8)
}
