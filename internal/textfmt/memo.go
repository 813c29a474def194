package textfmt

import "sync"

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
}

// memoCap is how many answers a generation holds: several sessions' worth
// of frames at once.
const memoCap = 16384

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

// Put remembers v for k.
func (m *Memo[K, V]) Put(k K, v V) {
	m.mu.Lock()
	m.putLocked(k, v)
	m.mu.Unlock()
}

func (m *Memo[K, V]) putLocked(k K, v V) {
	limit := m.Cap
	if limit <= 0 {
		limit = memoCap
	}
	if m.cur == nil || len(m.cur) >= limit {
		m.old, m.cur = m.cur, make(map[K]V, min(limit, 1024))
	}
	m.cur[k] = v
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
