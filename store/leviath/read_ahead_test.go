package leviath

import (
	"github.com/zeebo/xxh3"

	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Reading ahead in a goroutine hands fn the same frames, at the same
// offsets, and ends the same way as reading in the caller's: over every
// journal of the fixture (torn, damaged and crashed ones among them), a
// journal of long frames cut to skeletons, and with fn stopping at each
// frame in turn.
func TestReadAheadAgrees(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	m := baseMeta("long-1785427200-0123456789ab", "long", "A run with long results", t0)
	g := newGenRun(t, fx.runs, m, true, stdRegions(m.task)...)
	for i := 0; i < 6; i++ {
		call := fmt.Sprintf("c%d", i)
		g.progress(t0+int64(i), g.appendD("conversation", turnE("reading", genCall{call, "bash", args("command", "cat")}),
			resultE(call, "bash", strings.Repeat("x\"\\y\n", (60<<10)*(i+1)), false)))
	}
	journals, _ := filepath.Glob(filepath.Join(fx.runs, "*", "run.lvr"))
	if len(journals) < 5 {
		t.Fatalf("%d journals", len(journals))
	}
	type frame struct {
		off     int64
		payload string
	}
	read := func(how func(*os.File, int64, int64, *foldHash, frameFn) (int64, tailState, int64, error), p string, stopAt int) ([]frame, string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		var got []frame
		h, _ := hashJournalTo(f, preambleLen)
		next, st, _, err := how(f, preambleLen, fi.Size(), h, func(off int64, payload []byte) bool {
			if len(got) == stopAt {
				return false
			}
			got = append(got, frame{off, string(bytes.Clone(payload))})
			return true
		})
		// The fold cache's hash was fed every byte up to where the read
		// stopped, and hashes them as the file does.
		b, _ := os.ReadFile(p)
		if sum, ok := h.sumTo(f, next); h.at < next || !ok || sum != xxh3.Hash(b[:next]) {
			t.Fatalf("%s, stopping at %d: the hash reached %d of %d (ok %v) and is %x, the file's %x", p, stopAt, h.at, next, ok, sum, xxh3.Hash(b[:next]))
		}
		return got, fmt.Sprintf("next %d state %d err %v", next, st, err)
	}
	for _, p := range journals {
		all, _ := read(scanFrames, p, -1)
		for _, stopAt := range []int{-1, 0, 1, 2, len(all) / 2, len(all) - 1, len(all)} {
			want, wend := read(scanFrames, p, stopAt)
			got, gend := read(readFramesAhead, p, stopAt)
			if gend != wend || len(got) != len(want) {
				t.Fatalf("%s, stopping at %d: ahead %d frames, %s; in turn %d frames, %s", p, stopAt, len(got), gend, len(want), wend)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s frame %d: at %d (%d bytes), in turn at %d (%d bytes)", p, i, got[i].off, len(got[i].payload), want[i].off, len(want[i].payload))
				}
			}
		}
	}
}
