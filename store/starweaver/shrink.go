package starweaver

import (
	"bytes"
	"context"
	"regexp"
	"strconv"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// A record holding a huge value (a tool's 200 MB output) is never decoded
// whole: it is read from the store a piece at a time (sqlitex.ScanField)
// through a shrinker, which passes the JSON on unchanged except that each
// string value is cut after stringBytes bytes, its closing quote kept. The
// result is a small record of the same shape whose long strings are cut,
// and decodes as usual; the cut strings are longer than MaxDetailBytes
// once decoded, so the detail names them cut as it does any long field.

// stringBytes is where the shrinker cuts a string, in encoded bytes: an
// escape (\u0001) is six bytes for one, so six times the detail's cap
// still decodes to more than the cap.
const stringBytes = 6*store.MaxDetailBytes + 16

// shrinker is an io.Writer of a JSON text that keeps out, in b, what is
// past stringBytes in each string value (keys are kept whole).
type shrinker struct {
	limit   int // where to cut; stringBytes when 0
	b       []byte
	inStr   bool
	letter  bool // a backslash was read: the escape's letter comes next
	hex     int  // hex digits of a \u escape still to come
	n       int  // bytes of the current string kept
	cutting bool
	cut     bool   // some string was cut
	objs    []bool // the open containers, true for an object
	wantKey bool   // the next string is an object's key (never cut)
	isKey   bool   // the current string is a key
}

func (s *shrinker) Write(p []byte) (int, error) {
	n := len(p)
	sk := skipper{end: len(p), bs: -2}
	for len(p) > 0 {
		if s.inStr && s.cutting && !s.letter && s.hex == 0 {
			// Past the cut: skip to the next quote or backslash at once.
			i := sk.next(p)
			if i < 0 {
				return n, nil
			}
			p = p[i:]
		}
		c := p[0]
		p = p[1:]
		if !s.inStr {
			s.b = append(s.b, c)
			switch c {
			case '"':
				s.inStr, s.n, s.cutting = true, 0, false
				s.isKey, s.wantKey = s.wantKey, false
			case '{':
				s.objs = append(s.objs, true)
				s.wantKey = true
			case '[':
				s.objs = append(s.objs, false)
			case '}', ']':
				if len(s.objs) > 0 {
					s.objs = s.objs[:len(s.objs)-1]
				}
			case ',':
				s.wantKey = len(s.objs) > 0 && s.objs[len(s.objs)-1]
			}
			continue
		}
		inEscape := s.letter || s.hex > 0
		closing := !inEscape && c == '"'
		switch {
		case s.hex > 0:
			s.hex--
		case s.letter:
			s.letter = false
			if c == 'u' {
				s.hex = 4
			}
		case c == '\\':
			s.letter = true
		}
		if closing {
			s.inStr = false
			s.b = append(s.b, c)
			continue
		}
		if !s.cutting && !s.isKey && s.n >= s.max() && !inEscape && (c < 0x80 || c >= 0xC0) {
			// A character or an escape starts here: cut before it.
			s.cutting, s.cut = true, true
		}
		if !s.cutting {
			s.b = append(s.b, c)
			s.n++
		}
	}
	return n, nil
}

// skipper finds, in what is left of one Write's bytes, the next quote or
// backslash: bytes.IndexAny(p, `"\`), four to five times faster on a long
// string. It looks for the backslash first and keeps where it is, then
// for the quote only up to it (inside a string a quote comes right after
// a backslash or ends the string), so every byte is looked at about twice
// however many strings a write holds.
type skipper struct {
	end int // len of the Write's bytes: len(p) says where p starts
	bs  int // the next backslash's index in the Write's bytes (-1: none; -2: not looked for)
}

func (k *skipper) next(p []byte) int {
	at := k.end - len(p) // where p starts in the Write's bytes
	if k.bs == -2 || (k.bs >= 0 && k.bs < at) {
		k.bs = -1
		if i := bytes.IndexByte(p, '\\'); i >= 0 {
			k.bs = at + i
		}
	}
	lim := p
	if k.bs >= 0 {
		lim = p[:k.bs-at]
	}
	if q := bytes.IndexByte(lim, '"'); q >= 0 {
		return q
	}
	if k.bs >= 0 {
		return k.bs - at
	}
	return -1
}

// bigRecord is the longest record handed to SQL: a longer one is read
// through the shrinker. Every expression over a column (LIKE included) has
// SQLite load the whole value.
const bigRecord = 1 << 20

// guardLikes makes each "record LIKE x" of a WHERE clause true for a
// record longer than bigRecord without loading it (octet_length reads the
// length from the row's header): such a record passes the SQL filter, and
// the decoded record is judged in Go like every other (every LIKE here is
// a pre-filter of what the Go code checks again).
func guardLikes(where string) string {
	return likeRe.ReplaceAllString(where, "(octet_length(record) > "+strconv.Itoa(bigRecord)+" OR record LIKE $1)")
}

var likeRe = regexp.MustCompile(`record LIKE (\?|'[^']*')`)

// shrunk reads a big record (size bytes long) through the shrinker: its
// JSON with every string cut after stringBytes. The last few are kept: one
// command reads the same record for the timeline, the counts and the
// detail, and each read of 200 MB costs a second. A record rewritten to
// another length is read again.
func (s *Store) shrunk(ctx context.Context, table string, rowid, size int64) ([]byte, error) {
	key := shrunkKey{table, rowid, size}
	s.shrunkMu.Lock()
	b, ok := s.shrunkRecs[key]
	s.shrunkMu.Unlock()
	if ok {
		return b, nil
	}
	s.bigReads.Add(1)
	sh := &shrinker{}
	// The shrinker only computes in memory: it may run inside the read.
	if _, err := sqlitex.ScanField(ctx, s.read, table, "record", rowid, func(p []byte) error { sh.Write(p); return nil }); err != nil {
		return nil, mapErr(s.path, err)
	}
	s.shrunkMu.Lock()
	defer s.shrunkMu.Unlock()
	if s.shrunkRecs == nil || len(s.shrunkRecs) >= shrunkKept {
		s.shrunkRecs = map[shrunkKey][]byte{}
	}
	s.shrunkRecs[key] = sh.b
	return sh.b, nil
}

// shrunkKept is how many shrunk records a store keeps.
const shrunkKept = 8

type shrunkKey struct {
	table       string
	rowid, size int64
}

func (s *shrinker) max() int {
	if s.limit > 0 {
		return s.limit
	}
	return stringBytes
}
