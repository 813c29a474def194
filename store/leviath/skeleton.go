package leviath

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// A journal frame can be 256 MB, nearly all of it one string: a tool's
// output. Decoding it whole would cost the frame and every copy the JSON
// decoder makes of that string; the fold needs its first line and a
// fingerprint. So a frame is streamed through skeleton first: everything
// but long strings is copied as it is, and a string longer than the limit
// is replaced by its first bytes and a marker carrying the fingerprint of
// the whole encoded string and its length. The skeleton is small, and
// encoding/json decodes it; a text field (text.UnmarshalJSON) reads the
// marker back, and any other string keeps its first bytes (see cutMarks).
//
// The marker is `\u0000vigil-cut:NONCE:HASH:LEN`, NONCE random for the
// process, so that no journal can forge one.

// Content fingerprints are XXH3-64 of the encoded string (zeebo/xxh3:
// AVX2 code, streamed here, in one call for a short string; both give the
// same sum), and the same in every process, so that a fold summary written by
// one process (fold_cache.go) matches the entries another reads after it.
// A journal could craft two contents of one fingerprint; all it gains is
// that its own later entry is taken for its own earlier one.

var cutPrefix = func() []byte {
	var b [8]byte
	rand.Read(b[:])
	return []byte(`\u0000vigil-cut:` + hex.EncodeToString(b[:]) + ":")
}()

// foldStringLimit is the longest string the fold keeps whole: meta fields,
// tool names and ids, a line of model text. Anything longer is a content
// the fold only fingerprints.
const foldStringLimit = 4 << 10

// skeletonFrames is the frame size from which a frame is read through
// skeleton rather than decoded whole.
const skeletonFrames = 256 << 10

// skeleton reads one frame's JSON (n bytes from r) into dst with every
// string longer than limit encoded bytes cut and marked. A string that is
// not valid JSON inside (a raw control character) stays invalid, so that
// the frame is still refused as damage.
//
// It scans r's buffer in place (a *bufio.Reader's, or one of its own
// around any other reader): the bytes of a long string are looked at once
// for its end and once by the fingerprint, and never copied.
func skeleton(r io.Reader, n int64, limit int, dst *bytes.Buffer) error {
	dst.Reset()
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, int(min(n+1, 64<<10)))
	}
	var (
		in   bool         // inside a string
		esc  bool         // the previous byte was a backslash
		str  []byte       // the string so far, quotes included, while it is short
		big  bool         // the string is past limit: str holds its head
		h    = xxh3.New() // the whole string, while big
		size int64        // the whole string's encoded length, while big
		bad  bool         // a raw control character in a big string
		left = n
	)
	for left > 0 {
		// What is buffered, or one read's worth when nothing is: never a
		// Peek that slides buffered bytes along to make room.
		want := br.Buffered()
		if want == 0 {
			want = br.Size()
		}
		all, err := br.Peek(int(min(int64(want), left)))
		if len(all) == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		left -= int64(len(all))
		chunk := all
		for len(chunk) > 0 {
			if !in {
				i := bytes.IndexByte(chunk, '"')
				if i < 0 {
					dst.Write(chunk)
					break
				}
				dst.Write(chunk[:i])
				in, esc, big, bad, str = true, false, false, false, append(str[:0], '"')
				chunk = chunk[i+1:]
				continue
			}
			// Inside a string: find its end, minding escapes, one pass
			// (stop) over each plain run.
			end := -1
		scan:
			for j := 0; j < len(chunk); j++ {
				if esc {
					esc = false
					if chunk[j] < 0x20 {
						bad = true
					}
					continue
				}
				if j += stop(chunk[j:]); j == len(chunk) {
					break
				}
				switch chunk[j] {
				case '"':
					end = j
					break scan
				case '\\':
					esc = true
				default:
					bad = true // a raw control character
				}
			}
			part := chunk
			if end >= 0 {
				part = chunk[:end+1]
			}
			if big {
				h.Write(part)
				size += int64(len(part))
			} else if room := limit + 2 - len(str); len(part) < room {
				str = append(str, part...) // still short
			} else {
				// Past limit: the head is kept, the rest only fingerprinted
				// where it lies in the buffer.
				str = append(str, part[:room]...)
				big = true
				h.Reset()
				h.Write(str)
				h.Write(part[room:])
				size = int64(len(str) + len(part) - room)
				str = cutEncoded(str[:limit+1]) // '"' and the head
			}
			if end < 0 {
				break
			}
			in = false
			if big {
				dst.Write(str)
				if bad {
					dst.WriteByte(0x01) // still invalid JSON, as the frame was
				}
				dst.Write(cutPrefix)
				dst.WriteString(strconv.FormatUint(h.Sum64(), 16))
				dst.WriteByte(':')
				dst.WriteString(strconv.FormatInt(size, 10))
				dst.WriteByte('"')
			} else {
				dst.Write(str)
			}
			chunk = chunk[end+1:]
		}
		br.Discard(len(all))
	}
	if in {
		dst.Write(str) // unterminated: the decoder says so
	}
	return nil
}

// plainRun is how many bytes at the start of b need no attention inside a
// JSON string: no quote, no backslash, no control character.
func plainRun(b []byte) int { return stop(b) }

// stop is the index of b's first quote, backslash or control character
// (len(b): none): where a JSON string's plain run ends. It looks in
// windows that double, so that a call costs about the distance to the
// byte it finds, however far the next quote is (a string of many escapes
// is not searched to its end for each).
func stop(b []byte) int {
	for i, w := 0, 64; i < len(b); w *= 2 {
		seg := b[i:min(i+w, len(b))]
		q := bytes.IndexByte(seg, '"')
		if q >= 0 {
			seg = seg[:q]
		}
		if a := attention(seg); a < len(seg) || q >= 0 {
			return i + a
		}
		i += len(seg)
	}
	return len(b)
}

// attention is the index of b's first backslash or control character
// (len(b): none). The backslash is found by bytes.IndexByte (vector
// instructions); a control character, below 0x20, is looked for 64 bytes
// at a time: a word x holds a byte below 0x20 exactly when
// (x - 0x2020…) &^ x has a high bit set (a borrow can set more, but only
// after a byte that is below). A tool's output is most of a long frame:
// this loop is the fold's own cost per byte.
func attention(b []byte) int {
	if k := bytes.IndexByte(b, '\\'); k >= 0 {
		b = b[:k]
	}
	const (
		lows  = 0x2020202020202020
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+64 <= len(b); i += 64 {
		w := b[i : i+64 : i+64]
		x0, x1 := binary.LittleEndian.Uint64(w[0:]), binary.LittleEndian.Uint64(w[8:])
		x2, x3 := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		x4, x5 := binary.LittleEndian.Uint64(w[32:]), binary.LittleEndian.Uint64(w[40:])
		x6, x7 := binary.LittleEndian.Uint64(w[48:]), binary.LittleEndian.Uint64(w[56:])
		acc := (x0-lows)&^x0 | (x1-lows)&^x1 | (x2-lows)&^x2 | (x3-lows)&^x3 |
			(x4-lows)&^x4 | (x5-lows)&^x5 | (x6-lows)&^x6 | (x7-lows)&^x7
		if acc&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return len(b)
}

// cutEncoded shortens an encoded string's head (its opening quote and
// bytes) to a boundary that splits no escape and no UTF-8 sequence.
func cutEncoded(b []byte) []byte {
	body := b[1:]
	j := 0
	for j < len(body) {
		if body[j] != '\\' {
			j++
			continue
		}
		w := 2
		if j+1 < len(body) && body[j+1] == 'u' {
			w = 6
		}
		if j+w > len(body) {
			break
		}
		j += w
	}
	for j > 0 && j < len(body) && !utf8.RuneStart(body[j]) {
		j--
	}
	return b[:1+j]
}

// maxMarkLen is the longest marker skeleton writes, closing quote
// included: the prefix, 16 hex digits, ':', at most 19 digits of length.
var maxMarkLen = len(cutPrefix) + 16 + 1 + 19 + 1

// cutMark finds the marker at the end of an encoded string (quotes
// included) and returns the string without it, the whole string's
// fingerprint and encoded length.
func cutMark(raw []byte) (head []byte, hash uint64, size int64, ok bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return raw, 0, 0, false
	}
	// The marker is the string's last bytes, as skeleton writes it: only
	// they are searched, not a whole 256 KB content for every entry read.
	from := max(0, len(raw)-maxMarkLen)
	i := bytes.LastIndex(raw[from:], cutPrefix)
	if i < 0 {
		return raw, 0, 0, false
	}
	i += from
	fields := bytes.Split(raw[i+len(cutPrefix):len(raw)-1], []byte{':'})
	if len(fields) != 2 {
		return raw, 0, 0, false
	}
	hash, err1 := strconv.ParseUint(string(fields[0]), 16, 64)
	size, err2 := strconv.ParseInt(string(fields[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return raw, 0, 0, false
	}
	head = append(raw[:i:i], '"')
	return head, hash, size, true
}

// cutMarks takes the markers out of a decoded plain string field (a run's
// task, say, longer than the fold keeps): what is left is its head.
func cutMarks(s string) string {
	const nul = "\x00vigil-cut:"
	if i := bytesIndexString(s, nul); i >= 0 {
		return s[:i] + "…"
	}
	return s
}

func bytesIndexString(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// contentHash is the fingerprint of a whole encoded string.
func contentHash(raw []byte) uint64 {
	return xxh3.Hash(raw)
}
