package leviath

import (
	"errors"
	"io"
	"os"

	"github.com/zeebo/xxh3"
)

// The fold cache's summary of [0, off) is trusted only if every one of
// those bytes hashes as it did (XXH3-64). The hash is made while the fold
// reads them (foldHash, fed by scanFrames' reads), so it costs the fold
// only the hashing; a warm open hashes them again in large reads
// (hashJournalTo) before it uses the summary.

// foldHash is the XXH3-64 of a journal's bytes [0, at), fed in file
// order. marks keep the digest at points behind at, so the hash of any
// [0, off) with off below at is a short re-read away (sumTo).
type foldHash struct {
	d     xxh3.Hasher
	at    int64
	marks []hashMark
}

type hashMark struct {
	at int64
	d  xxh3.Hasher
}

// hashMarkEvery is how far apart the marks are: sumTo re-reads at most
// this much (and a fold's last read) of what the fold already read.
const hashMarkEvery = 4 << 20

func newFoldHash() *foldHash {
	h := &foldHash{}
	h.d.Reset()
	return h
}

// feed hashes p, read at file offset at, as far as it continues what
// was hashed (bytes behind at are skipped; a read past a gap is not hashed,
// and sumTo reads the gap itself).
func (h *foldHash) feed(at int64, p []byte) {
	if h == nil || at > h.at || at+int64(len(p)) <= h.at {
		return
	}
	if n := len(h.marks); n == 0 || h.at-h.marks[n-1].at >= hashMarkEvery {
		h.marks = append(h.marks, hashMark{h.at, h.d})
	}
	h.d.Write(p[h.at-at:])
	h.at = at + int64(len(p))
}

// sumTo is the hash of f's bytes [0, off): from the digest at off, or
// from the last mark at or before off and the bytes after it read again.
// ok is false when f no longer has them all.
func (h *foldHash) sumTo(f *os.File, off int64) (sum uint64, ok bool) {
	var from hashMark
	switch {
	case h != nil && h.at <= off:
		from = hashMark{h.at, h.d}
	case h != nil:
		for i := len(h.marks) - 1; i >= 0; i-- {
			if h.marks[i].at <= off {
				from = h.marks[i]
				break
			}
		}
	}
	if from.at == 0 {
		from.d.Reset()
	}
	if !hashRange(f, &from.d, from.at, off) {
		return 0, false
	}
	return from.d.Sum64(), true
}

// hashReadSize is a warm open's read: large, so that hashing a 1 GB
// journal again is a few thousand reads.
const hashReadSize = 1 << 20

// hashRange feeds f's bytes [from, to) into d. It is false when they
// cannot all be read.
func hashRange(f *os.File, d *xxh3.Hasher, from, to int64) bool {
	buf := make([]byte, min(hashReadSize, max(to-from, 0)))
	for from < to {
		n := min(int64(len(buf)), to-from)
		m, err := f.ReadAt(buf[:n], from)
		d.Write(buf[:m])
		from += int64(m)
		if int64(m) < n {
			return false // shorter now (or unreadable)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false
		}
	}
	return true
}

// hashJournalTo hashes f's bytes [0, off) (a warm open's check), and gives
// the hash to go on with as the fold reads past off.
func hashJournalTo(f *os.File, off int64) (*foldHash, bool) {
	h := newFoldHash()
	if !hashRange(f, &h.d, 0, off) {
		return nil, false
	}
	h.at = off
	return h, true
}
