package tui

// chunkLen is how many elements one chunk of a chunked holds.
const chunkLen = 4096

// chunked is a growing list kept in fixed chunks: appending never copies what
// is held (a slice that doubles holds both copies for a moment, twice the
// list at its peak), and a list of a million small entries is a few
// hundred allocations.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

func (c *chunked[T]) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

func (c *chunked[T]) At(i int) T { return c.chunks[i/chunkLen][i%chunkLen] }

func (c *chunked[T]) Set(i int, v T) { c.chunks[i/chunkLen][i%chunkLen] = v }

func (c *chunked[T]) Append(v T) {
	if c.n/chunkLen == len(c.chunks) {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	k := c.n / chunkLen
	c.chunks[k] = append(c.chunks[k], v)
	c.n++
}

// Truncate drops the elements from n on.
func (c *chunked[T]) Truncate(n int) {
	for c.n > n {
		k := (c.n - 1) / chunkLen
		c.chunks[k] = c.chunks[k][:len(c.chunks[k])-1]
		if len(c.chunks[k]) == 0 {
			c.chunks = c.chunks[:k]
		}
		c.n--
	}
}
