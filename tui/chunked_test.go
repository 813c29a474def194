package tui

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// TestChunkedIsTheListAppended: whatever its fields (counting up, constant,
// small, spread over 64 bits, pending bits), a chunked list answers At as
// the plain list appended, truncated and set in the same order, across
// chunk boundaries both ways.
func TestChunkedIsTheListAppended(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	kinds := []func(i int) stepEntry{
		func(i int) stepEntry { return stepEntry{row: int64(1000 + i), number: int32(7 + i)} },
		func(i int) stepEntry { return stepEntry{row: int64(3 * i), back: uint32(i % 3), number: int32(i / 2)} },
		func(i int) stepEntry {
			return stepEntry{row: rng.Int63n(1 << 40), back: uint32(rng.Int63n(1<<32)) | pendingBit, number: int32(rng.Int31())}
		},
		func(i int) stepEntry {
			return stepEntry{row: []int64{math.MinInt64, math.MaxInt64, 0}[i%3], number: []int32{math.MinInt32, math.MaxInt32}[i%2]}
		},
		func(i int) stepEntry {
			return stepEntry{row: int64(i + rng.Intn(200)), number: int32(i + rng.Intn(60000))}
		},
	}
	for k, kind := range kinds {
		var c chunked[stepEntry]
		var want []stepEntry
		i := 0
		for round := 0; round < 40; round++ {
			switch n := rng.Intn(3 * chunkLen); rng.Intn(4) {
			case 0:
				keep := max(len(want)-rng.Intn(chunkLen+2), 0)
				c.Truncate(keep)
				want = want[:keep]
			case 1:
				if len(want) > 0 {
					j := len(want) - 1 - rng.Intn(min(len(want), 20))
					v := kind(i)
					i++
					c.Set(j, v)
					want[j] = v
				}
			default:
				for ; n > 0; n-- {
					v := kind(i)
					i++
					c.Append(v)
					want = append(want, v)
				}
			}
			if c.Len() != len(want) {
				t.Fatalf("kind %d round %d: Len %d, want %d", k, round, c.Len(), len(want))
			}
			for j := range want {
				if got := c.At(j); got != want[j] {
					t.Fatalf("kind %d round %d: At(%d) = %+v, want %+v", k, round, j, got, want[j])
				}
			}
		}
	}
}

// TestChunkedHoldsLittleOfARegularRun: the keys and samples of a million
// steps written alone (rows and numbers counting up, the same counts) are
// held in well under a megabyte, and a run whose rows interleave with
// other runs' in a few bytes a step, not 16.
func TestChunkedHoldsLittleOfARegularRun(t *testing.T) {
	const n = 1_000_000
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name   string
		entry  func(i int) stepEntry
		sample func(i int) packedSample
		most   uint64
	}{
		{"alone", func(i int) stepEntry { return stepEntry{row: int64(i + 1), number: int32(i + 1)} },
			func(i int) packedSample {
				return packedSample{estimated: 270, reported: 300, step: int32(i + 1), flags: sampleReported}
			},
			1 << 20},
		{"interleaved", func(i int) stepEntry { return stepEntry{row: int64(5*i + rng.Intn(5)), number: int32(i + 1)} },
			func(i int) packedSample {
				return packedSample{estimated: int32(20_000 + rng.Intn(40_000)), reported: int32(rng.Intn(60_000)), step: int32(i + 1)}
			},
			// two bytes a row, two for each count, nothing for the numbers
			n*6 + 2<<20},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var keys chunked[stepEntry]
		var samples chunked[packedSample]
		for i := 0; i < n; i++ {
			keys.Append(tc.entry(i))
			samples.Append(tc.sample(i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
		if held > tc.most {
			t.Errorf("%s: a million steps' keys and samples hold %.1f MB, want at most %.1f", tc.name, float64(held)/(1<<20), float64(tc.most)/(1<<20))
		}
		if keys.Len() != n || samples.Len() != n || keys.At(n/2) != tc.entry(n/2) && tc.name == "alone" {
			t.Errorf("%s: the lists are not what was appended", tc.name)
		}
		runtime.KeepAlive(&keys)
		runtime.KeepAlive(&samples)
	}
}
