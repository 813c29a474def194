package leviath

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// run.lvr (docs/formats/leviath.md, "Framing"): "LVR1", a u16 big-endian
// format version, then frames of a u64 big-endian length and that many
// bytes of compact JSON (one RunRecord each). No checksum, index or
// padding; append-only.
const (
	journalMagic = "LVR1"
	preambleLen  = 6
	// MaxJournalVersion is the newest run.lvr format version vigil reads.
	MaxJournalVersion = 1
	// maxFrame is HEAD's codec limit: a longer length prefix is damage.
	maxFrame = 256 << 20
)

// restartMarker starts the first frame of a daemon's first job after a
// restart. Raw (unescaped) it can only begin a record, so after a crash
// tore a frame the journal resumes at the next frame starting with it.
var restartMarker = []byte(`{"OwnershipChanged":`)

// tailState is how a read of a journal ended.
type tailState int

const (
	tailClean tailState = iota // every byte up to the size read was a whole frame
	tailTorn                   // a frame runs past the end: not complete yet (or torn by a crash)
	tailBad                    // a whole frame that is not JSON, or an impossible length
)

// frameFn gets each whole frame: off is where its length prefix starts.
// It returns false to stop at this frame (it is then not consumed).
type frameFn func(off int64, payload []byte) bool

// foldReadSize is readFrames' buffer: a long journal is read in reads of
// this many bytes, a long frame scanned in place in the buffer (skeleton).
const foldReadSize = 256 << 10

// readFrames reads the frames in [off, size) of f. It returns the offset
// after the last frame consumed and how the read ended. n counts the bytes
// it read from the file.
//
// A long read (aheadBytes or more) is split in two: a goroutine reads the
// frames and cuts the long ones to their skeletons, while the caller's fn
// folds the frames before them (readFramesAhead).
func readFrames(f *os.File, off, size int64, fn frameFn) (next int64, st tailState, n int64, err error) {
	return readFramesHashed(f, off, size, nil, fn)
}

// readFramesHashed is readFrames that also feeds every byte it reads to h
// (the fold cache's hash; nil: none).
func readFramesHashed(f *os.File, off, size int64, h *foldHash, fn frameFn) (next int64, st tailState, n int64, err error) {
	if size-off >= aheadBytes {
		return readFramesAhead(f, off, size, h, fn)
	}
	return scanFrames(f, off, size, h, fn)
}

// scanFrames is readFrames in the caller's goroutine.
func scanFrames(f *os.File, off, size int64, h *foldHash, fn frameFn) (next int64, st tailState, n int64, err error) {
	sr := io.NewSectionReader(f, off, size-off)
	cr := &countReader{r: sr, at: off, h: h}
	br := bufio.NewReaderSize(cr, int(max(4<<10, min(foldReadSize, size-off)))) // (a refresh's few new bytes need no megabyte)
	var lenBuf [8]byte
	var buf []byte
	var skel bytes.Buffer
	next = off
	for {
		left := size - next
		if left == 0 {
			return next, tailClean, cr.n, nil
		}
		if left < 8 {
			return next, tailTorn, cr.n, nil
		}
		if _, err := io.ReadFull(br, lenBuf[:]); err != nil {
			return next, tailTorn, cr.n, ioErr(err)
		}
		l := binary.BigEndian.Uint64(lenBuf[:])
		if l > maxFrame {
			return next, tailBad, cr.n, nil
		}
		if int64(l) > left-8 {
			return next, tailTorn, cr.n, nil
		}
		payload := buf
		if l > skeletonFrames {
			// A long frame is streamed: only its skeleton is held.
			if err := skeleton(br, int64(l), foldStringLimit, &skel); err != nil {
				return next, tailTorn, cr.n, ioErr(err)
			}
			payload = skel.Bytes()
			if skel.Cap() > 4<<20 {
				skel = bytes.Buffer{} // a frame of many short strings: not kept for the next
			}
		} else {
			if cap(buf) < int(l) {
				buf = make([]byte, l)
			}
			payload = buf[:l]
			if _, err := io.ReadFull(br, payload); err != nil {
				return next, tailTorn, cr.n, ioErr(err)
			}
		}
		if !fn(next, payload) {
			return next, tailBad, cr.n, nil
		}
		next += 8 + int64(l)
	}
}

// ioErr drops the EOF a file that shrank under us gives: the caller sees a
// torn tail and looks again.
func ioErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

type countReader struct {
	r  io.Reader
	n  int64
	at int64     // the file offset of the next byte read
	h  *foldHash // fed what is read (nil: nothing)
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.feed(c.at+c.n, p[:n])
	c.n += int64(n)
	return n, err
}

// readPreamble checks the magic and version at the start of the file. ok
// is false when fewer than 6 bytes exist yet (and those match the magic).
func readPreamble(f *os.File, size int64) (version uint16, ok bool, n int64, err error) {
	head := make([]byte, min(size, preambleLen))
	m, err := f.ReadAt(head, 0)
	n = int64(m)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, n, err
	}
	head = head[:m]
	k := min(len(head), len(journalMagic))
	if !bytes.Equal(head[:k], []byte(journalMagic)[:k]) {
		return 0, false, n, fmt.Errorf("not a Leviath journal: it starts %q, not %q", printable(head[:k]), journalMagic)
	}
	if len(head) < preambleLen {
		return 0, false, n, nil
	}
	return binary.BigEndian.Uint16(head[4:6]), true, n, nil
}

func printable(b []byte) string {
	out := make([]rune, 0, len(b))
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			out = append(out, '.')
		} else {
			out = append(out, rune(c))
		}
	}
	return string(out)
}

// frameVerdict is what a whole frame's bytes turned out to be.
type frameVerdict int

const (
	frameOK       frameVerdict = iota // a known record
	frameUnknown                      // valid JSON, a variant vigil does not know: skipped
	frameBadShape                     // a known variant whose fields do not decode: skipped, noted
	frameInvalid                      // not JSON: the journal is damaged here
)

// decodeFrame decodes one payload into rec (reset first) with encoding/json,
// whose errors are the ones given.
func decodeFrame(payload []byte, rec *runRecord) (frameVerdict, error) {
	*rec = runRecord{}
	err := json.Unmarshal(payload, rec)
	if err == nil {
		if rec.known() {
			return frameOK, nil
		}
		return frameUnknown, nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return frameInvalid, err
	}
	if !rec.known() {
		return frameUnknown, nil // a unit variant ("Foo"), an array, …
	}
	return frameBadShape, err
}

// findRestart looks for the first whole frame after the frame at stuck that
// starts with the restart marker and decodes as an OwnershipChanged record,
// searching payload starts in [from, size). It returns that frame's offset
// (its length prefix), or -1; n counts the bytes read.
func findRestart(f *os.File, stuck, from, size int64) (at int64, n int64, err error) {
	const chunk = 256 << 10
	lo := max(from, stuck+9) // a frame after the one at stuck has its payload here or later
	buf := make([]byte, chunk)
	for pos := lo; pos < size; {
		end := min(pos+chunk, size)
		m, err := f.ReadAt(buf[:end-pos], pos)
		n += int64(m)
		if err != nil && !errors.Is(err, io.EOF) {
			return -1, n, err
		}
		b := buf[:m]
		for i := 0; ; {
			j := bytes.Index(b[i:], restartMarker)
			if j < 0 {
				break
			}
			p := pos + int64(i+j)
			ok, k := restartFrameAt(f, p-8, size)
			n += k
			if ok {
				return p - 8, n, nil
			}
			i += j + 1
		}
		if end == size {
			break
		}
		pos = end - int64(len(restartMarker)-1)
	}
	return -1, n, nil
}

// restartFrameAt reports whether a whole OwnershipChanged frame starts at off.
func restartFrameAt(f *os.File, off, size int64) (bool, int64) {
	var lb [8]byte
	if m, err := f.ReadAt(lb[:], off); m < 8 || (err != nil && !errors.Is(err, io.EOF)) {
		return false, int64(m)
	}
	l := binary.BigEndian.Uint64(lb[:])
	if l > maxFrame || int64(l) > size-off-8 {
		return false, 8
	}
	payload := make([]byte, l)
	m, err := f.ReadAt(payload, off+8)
	if int64(m) < int64(l) || (err != nil && !errors.Is(err, io.EOF)) {
		return false, 8 + int64(m)
	}
	var rec runRecord
	v, _ := decodeFrame(payload, &rec)
	return v == frameOK && rec.OwnershipChanged != nil, 8 + int64(m)
}
