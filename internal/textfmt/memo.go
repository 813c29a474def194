package textfmt

import (
	"strings"
	"sync"
)

// Measuring a string that is not plain ASCII means walking its grapheme
// clusters, and a frame measures each of its lines, most of them the same
// as in the frame before (and, under vigil serve, as in every other
// session's frame). Widths, fits and cuts of such strings are remembered:
// each is a pure function of its arguments, so a remembered answer is the
// answer. Two generations bound the memory: when the current one is full it
// becomes the old one, and what is asked for again moves back.

// Memo remembers answers of a pure function, in two generations of memoCap
// (views keeps a style's renderings in one). Safe for concurrent use.
type Memo[K comparable, V any] struct {
	Cap      int // a generation's size (0: memoCap)
	mu       sync.Mutex
	cur, old map[K]V
	curBytes int // the bytes of the strings in cur
}

// memoCap is how many answers a generation holds: several sessions' worth
// of frames at once.
const memoCap = 16384

// memoBytes is how many bytes of strings a generation holds at most. A
// timeline that scrolls as its run grows brings new rows in every frame,
// each seen once: counted only by entries, the frame filter's memo and the
// fits held 13 MB of such rows (16384 of 400 bytes a generation) while a
// run grew by a million steps. Two megabytes are still the rows of some 160
// distinct 120×32 frames, or of two and a half rounds of frames of fifty
// vigil serve sessions each drawing its own.
const memoBytes = 2 << 20

// Get is the answer remembered for k.
func (m *Memo[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	if ok {
		m.putLocked(k, v)
	}
	return v, ok
}

// Put remembers v for k. A string in k or v is copied first: it is often a
// piece of a bigger one (a row cut from a frame, a prefix of a long line),
// and remembered as it is it would keep all of that alive (a frame a row:
// 13 MB of frames while a run grew by a million steps).
func (m *Memo[K, V]) Put(k K, v V) {
	k, v = owned(k), owned(v)
	m.mu.Lock()
	m.putLocked(k, v)
	m.mu.Unlock()
}

func (m *Memo[K, V]) putLocked(k K, v V) {
	limit := m.Cap
	if limit <= 0 {
		limit = memoCap
	}
	if m.cur == nil || len(m.cur) >= limit || m.curBytes >= memoBytes {
		m.old, m.cur, m.curBytes = m.cur, make(map[K]V, min(limit, 1024)), 0
	}
	m.cur[k] = v
	m.curBytes += stringBytes(k) + stringBytes(v)
}

// stringBytes is the length of the strings x holds.
func stringBytes[T any](x T) int {
	switch s := any(x).(type) {
	case string:
		return len(s)
	case sized:
		return len(s.s)
	}
	return 0
}

// owned is x with its strings copied.
func owned[T any](x T) T {
	switch s := any(x).(type) {
	case string:
		return any(strings.Clone(s)).(T)
	case sized:
		return any(sized{strings.Clone(s.s), s.w}).(T)
	}
	return x
}

// memoMin is the shortest string worth remembering: a shorter one is
// measured faster than it is looked up.
const memoMin = 8

type sized struct {
	s string
	w int
}

var (
	widths Memo[string, int]
	fits   Memo[sized, string]
	cuts   Memo[sized, string]
)
