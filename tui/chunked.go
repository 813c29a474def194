package tui

import "encoding/binary"

// chunkLen is how many elements one chunk of a chunked holds.
const chunkLen = 4096

// chunked is a growing list kept in fixed chunks: appending never copies what
// is held (a slice that doubles holds both copies for a moment, twice the
// list at its peak), and a list of a million small entries is a few
// hundred allocations. Every full chunk is packed field by field (column):
// what the explorer keeps of each step and each context sample grows with
// the run, and packed it is a few bytes an entry, or none where a field
// counts up or stays the same, instead of 16 (32 MB held while one run grew
// by a million steps).
type chunked[T packable[T]] struct {
	packed []packedChunk // chunks 0… , full
	open   []T           // the newest chunk, as appended
	n      int
}

// packable is an element a chunked packs: up to four integer fields.
type packable[T any] interface {
	fields() [packFields]int64
	withFields(f [packFields]int64) T
}

const packFields = 4

type packedChunk [packFields]column

// column is one field of a full chunk: base + i·step when the field counts
// evenly (a step number, a row id of a run written alone, a flag never
// set), else base + an offset of width bytes, the fewest that hold every
// offset of the chunk.
type column struct {
	base, step int64
	width      uint8
	data       []byte
}

func packColumn(vs []int64) column {
	base, step := vs[0], int64(0)
	if len(vs) > 1 {
		step = vs[1] - vs[0]
	}
	even := true
	lo, hi := vs[0], vs[0]
	for i, v := range vs {
		even = even && v == base+int64(i)*step
		lo, hi = min(lo, v), max(hi, v)
	}
	if even {
		return column{base: base, step: step}
	}
	c := column{base: lo, width: 8}
	switch span := uint64(hi) - uint64(lo); {
	case span <= 0xff:
		c.width = 1
	case span <= 0xffff:
		c.width = 2
	case span <= 0xffffffff:
		c.width = 4
	}
	c.data = make([]byte, len(vs)*int(c.width))
	for i, v := range vs {
		d := uint64(v) - uint64(lo)
		switch c.width {
		case 1:
			c.data[i] = byte(d)
		case 2:
			binary.LittleEndian.PutUint16(c.data[2*i:], uint16(d))
		case 4:
			binary.LittleEndian.PutUint32(c.data[4*i:], uint32(d))
		default:
			binary.LittleEndian.PutUint64(c.data[8*i:], d)
		}
	}
	return c
}

func (c *column) at(i int) int64 {
	var d uint64
	switch c.width {
	case 0:
		return c.base + int64(i)*c.step
	case 1:
		d = uint64(c.data[i])
	case 2:
		d = uint64(binary.LittleEndian.Uint16(c.data[2*i:]))
	case 4:
		d = uint64(binary.LittleEndian.Uint32(c.data[4*i:]))
	default:
		d = binary.LittleEndian.Uint64(c.data[8*i:])
	}
	return int64(uint64(c.base) + d)
}

func pack[T packable[T]](vs []T) packedChunk {
	var p packedChunk
	col := make([]int64, len(vs)) // one field at a time: fields is a few moves
	for k := range p {
		for i, v := range vs {
			col[i] = v.fields()[k]
		}
		p[k] = packColumn(col)
	}
	return p
}

func unpackAt[T packable[T]](p *packedChunk, i int) T {
	var f [packFields]int64
	for k := range p {
		f[k] = p[k].at(i)
	}
	var zero T
	return zero.withFields(f)
}

func unpack[T packable[T]](p *packedChunk, into []T) []T {
	for i := 0; i < chunkLen; i++ {
		into = append(into, unpackAt[T](p, i))
	}
	return into
}

func (c *chunked[T]) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

func (c *chunked[T]) At(i int) T {
	k := i / chunkLen
	if k < len(c.packed) {
		return unpackAt[T](&c.packed[k], i%chunkLen)
	}
	return c.open[i%chunkLen]
}

// Set replaces element i (a packed chunk is packed again: Set is for the
// newest few, which a full chunk holds only just after it filled).
func (c *chunked[T]) Set(i int, v T) {
	k := i / chunkLen
	if k < len(c.packed) {
		vs := unpack[T](&c.packed[k], nil)
		vs[i%chunkLen] = v
		c.packed[k] = pack(vs)
		return
	}
	c.open[i%chunkLen] = v
}

func (c *chunked[T]) Append(v T) {
	if len(c.open) == chunkLen {
		c.packed = append(c.packed, pack(c.open))
		c.open = c.open[:0]
	}
	if c.open == nil {
		c.open = make([]T, 0, chunkLen)
	}
	c.open = append(c.open, v)
	c.n++
}

// Truncate drops the elements from n on.
func (c *chunked[T]) Truncate(n int) {
	for c.n > n {
		if len(c.open) == 0 {
			last := len(c.packed) - 1
			c.open = unpack[T](&c.packed[last], c.open)
			c.packed = c.packed[:last]
		}
		drop := min(len(c.open), c.n-n)
		c.open = c.open[:len(c.open)-drop]
		c.n -= drop
	}
}
