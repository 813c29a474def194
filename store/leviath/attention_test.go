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
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 95, 96, 127, 128, 200, 300} {
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

// TestStopIsTheByteScan: stop finds the first quote,
// backslash or control byte as a byte-at-a-time scan does, for each byte
// value at each place, in slices of every length around the vector steps
// and the doubling windows.
func TestStopIsTheByteScan(t *testing.T) {
	oracle := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	var fill []byte
	for c := 0x20; c < 0x100; c++ {
		if c != '\\' && c != '"' {
			fill = append(fill, byte(c))
		}
	}
	base := bytes.Repeat(fill, 4)[:600]
	for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193, 300, 448, 449, 600} {
		b := base[:n]
		if got, want := stop(b), oracle(b); got != want {
			t.Fatalf("%d plain bytes: %d, want %d", n, got, want)
		}
		for at := 0; at < n; at++ {
			for c := 0; c < 0x100; c++ {
				x := bytes.Clone(b)
				x[at] = byte(c)
				if got, want := stop(x), oracle(x); got != want {
					t.Fatalf("byte %#x at %d of %d: %d, want %d", c, at, n, got, want)
				}
			}
		}
	}
}

// TestAttentionAtEveryOffset: the word loop and its tails agree with the
// byte scan wherever a slice starts and ends in its buffer.
func TestAttentionAtEveryOffset(t *testing.T) {
	buf := bytes.Repeat([]byte("abcdefgh ✓ é日本語 0123456789 x"), 20)
	for from := 0; from < 70; from++ {
		for to := from; to <= from+200; to++ {
			b := buf[from:to]
			want := len(b)
			if got := attention(b); got != want {
				t.Fatalf("[%d:%d]: %d, want %d", from, to, got, want)
			}
			if len(b) > 0 {
				x := bytes.Clone(b)
				x[len(x)-1] = '\\'
				if got := attention(x); got != len(x)-1 {
					t.Fatalf("[%d:%d] ending in a backslash: %d", from, to, got)
				}
				x[len(x)-1] = '"'
				if got := stop(x); got != len(x)-1 {
					t.Fatalf("[%d:%d] ending in a quote: %d", from, to, got)
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
