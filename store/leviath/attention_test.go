package leviath

import (
	"bytes"
	"strings"
	"testing"
)

// TestAttentionIsTheByteScan: attention finds the first backslash or
// control byte as a byte-at-a-time scan does, for each byte value at each
// place in and around a 64-byte block, among bytes of every other value.
func TestAttentionIsTheByteScan(t *testing.T) {
	oracle := func(b []byte) int {
		for i, c := range b {
			if c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	var fill []byte
	for c := 0x20; c < 0x100; c++ {
		if c != '\\' {
			fill = append(fill, byte(c))
		}
	}
	base := bytes.Repeat(fill, 2)[:300]
	for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 127, 128, 200, 300} {
		b := base[:n]
		if got, want := attention(b), oracle(b); got != want {
			t.Fatalf("%d plain bytes: %d, want %d", n, got, want)
		}
		for at := 0; at < n; at++ {
			for c := 0; c < 0x100; c++ {
				x := bytes.Clone(b)
				x[at] = byte(c)
				if got, want := attention(x), oracle(x); got != want {
					t.Fatalf("byte %#x at %d of %d: %d, want %d", c, at, n, got, want)
				}
			}
		}
	}
}

func BenchmarkAttention(b *testing.B) {
	p := []byte(strings.Repeat("abcdefgh ✓ é日本語 0123456789 x", 8<<10))
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if attention(p) != len(p) {
			b.Fatal("found one")
		}
	}
}
