package leviath

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// pairsJournal is a run of n frames, each an assistant turn that calls a
// tool and the tool's result (as a long agent job journals them); every
// third result is longer than skeletonFrames, so both ways a frame is read
// back are met.
func pairsJournal(t testing.TB, n, entry int) (runs, id string, g *genRun) {
	t.Helper()
	runs, id = filepath.Join(t.TempDir(), "runs"), "pairs-1785427200-0123456789ab"
	m := baseMeta(id, "pairs", "A run of turns and results", t0)
	g = newGenRun(t, runs, m, true, stdRegions(m.task)...)
	for i := 0; i < n; i++ {
		size := entry
		if i%3 == 2 {
			size = skeletonFrames + 4096
		}
		out := strings.Repeat(fmt.Sprintf("line %d of \"cat\"\t\\ é\n", i), size/20+1)[:size]
		call := fmt.Sprintf("toolu_%d", i)
		g.progress(t0+int64(i), g.appendD("conversation",
			turnE(fmt.Sprintf("turn %d", i), genCall{call, "bash", args("command", "cat big.log")}),
			resultE(call, "bash", out, false)))
	}
	return runs, id, g
}

// details reads every step's detail in order, as show --json does.
func details(t testing.TB, s *Store, id string, forget bool) []store.StepDetail {
	t.Helper()
	var out []store.StepDetail
	for _, st := range steps(t, s, id) {
		if forget {
			s.mu.Lock()
			s.frames.key, s.frames.rec = frameKey{}, nil
			s.mu.Unlock()
		}
		d, err := s.StepDetail(bg, id, st.RowID)
		if err != nil {
			t.Fatalf("step %d: %v", st.Number, err)
		}
		out = append(out, d)
	}
	return out
}

func decodes(s *Store) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames.decodes
}

// TestDetailsDecodeEachFrameOnce: reading every step's detail in order
// decodes each frame of the journal once (the turn, its result and the
// result's call all come from one frame), and what each detail says is
// what it says read alone with nothing kept.
func TestDetailsDecodeEachFrameOnce(t *testing.T) {
	const frames = 9
	runs, id, _ := pairsJournal(t, frames, 3000)
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := details(t, s, id, false)
	var results int
	for _, d := range got {
		if d.Result != "" {
			results++
			if !strings.HasPrefix(d.ToolCallFull, "bash ") {
				t.Errorf("step %d: a result's call is %q", d.Number, d.ToolCallFull)
			}
		}
	}
	if results != frames {
		t.Fatalf("%d results, want %d", results, frames)
	}
	// The prompt comes from the checkpoint frame: one decode more.
	if n := decodes(s); n > frames+1 {
		t.Errorf("%d frames decoded for %d details of %d frames", n, len(got), frames)
	}
	before := decodes(s)
	alone := details(t, s, id, true)
	if decodes(s)-before < int64(len(alone)) {
		t.Errorf("the memo was not forgotten: %d decodes for %d details", decodes(s)-before, len(alone))
	}
	if !reflect.DeepEqual(got, alone) {
		for i := range got {
			if !reflect.DeepEqual(got[i], alone[i]) {
				t.Fatalf("step %d read in order:\n%+v\nread alone:\n%+v", got[i].Number, got[i], alone[i])
			}
		}
		t.Fatal("details differ")
	}
}

// TestDetailMemoMissesAChangedJournal: a frame kept for one detail is not
// used once run.lvr has changed: after an append the same row is decoded
// again, and after a rewrite in place of its bytes the detail says the
// frame has changed rather than showing what it held before.
func TestDetailMemoMissesAChangedJournal(t *testing.T) {
	runs, id, g := pairsJournal(t, 2, 3000)
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := steps(t, s, id)
	last := st[len(st)-1]
	d1, err := s.StepDetail(bg, id, last.RowID)
	if err != nil || !strings.HasPrefix(d1.Result, "line 1 of") {
		t.Fatalf("%q %v", d1.Result, err)
	}
	n := decodes(s)
	if _, err := s.StepDetail(bg, id, last.RowID); err != nil || decodes(s) != n {
		t.Fatalf("the same frame again: %d decodes, then %d (%v)", n, decodes(s), err)
	}

	g.appendBytes(g.progressFrame(t0+10, g.appendD("conversation", textE("later"))))
	d2, err := s.StepDetail(bg, id, last.RowID)
	if err != nil || d2.Result != d1.Result {
		t.Fatalf("after an append: %q %v", d2.Result, err)
	}
	if decodes(s) != n+1 {
		t.Errorf("after an append: %d decodes, want %d", decodes(s), n+1)
	}

	// The result's bytes, rewritten in place: same inode, same size.
	p := filepath.Join(runs, id, "run.lvr")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "line 1 of")
	if i < 0 {
		t.Fatal("no result text in the journal")
	}
	time.Sleep(20 * time.Millisecond) // a later modification time, on a coarse clock too
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("LINE"), int64(i)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d3, err := s.StepDetail(bg, id, last.RowID)
	if err == nil {
		t.Fatalf("a rewritten frame was shown: %q", d3.Result[:20])
	}
	if !strings.Contains(err.Error(), "its frame has changed") {
		t.Errorf("rewritten frame: %v", err)
	}
}

// TestCutMarkIsAtTheEnd pins what cutMark's search relies on: the marker
// skeleton writes is the last bytes of the string and no longer than
// maxMarkLen, even with the largest fingerprint and length, so a search
// of the string's tail finds it.
func TestCutMarkIsAtTheEnd(t *testing.T) {
	for _, c := range []struct {
		hash uint64
		size int64
	}{{0, 0}, {1, 300000}, {^uint64(0), 1<<63 - 1}} {
		raw := append([]byte(`"`+strings.Repeat("x", 1000)), cutPrefix...)
		raw = fmt.Appendf(raw, "%x:%d\"", c.hash, c.size)
		if mark := len(raw) - 1001; mark > maxMarkLen {
			t.Fatalf("a marker of %d bytes, maxMarkLen %d", mark, maxMarkLen)
		}
		head, hash, size, ok := cutMark(raw)
		if !ok || hash != c.hash || size != c.size || string(head) != `"`+strings.Repeat("x", 1000)+`"` {
			t.Errorf("%x:%d: %v %x %d %.20q", c.hash, c.size, ok, hash, size, head)
		}
	}
	// Through skeleton itself: a long string and a short one.
	long := `"` + strings.Repeat("0123456789abcdef ", 40000) + `"`
	for _, in := range []string{long, `"short"`} {
		var skel bytes.Buffer
		if err := skeleton(strings.NewReader(in), int64(len(in)), 4096, &skel); err != nil {
			t.Fatal(err)
		}
		var tx text
		if err := tx.UnmarshalJSON(skel.Bytes()); err != nil {
			t.Fatal(err)
		}
		if tx.hash != contentHash([]byte(in)) || tx.cut != (in == long) {
			t.Errorf("%.10q: hash %x want %x, cut %v", in, tx.hash, contentHash([]byte(in)), tx.cut)
		}
	}
}

// TestHasEscape: attention's word-wide loop says what a byte loop says,
// for a backslash or a control byte at every position of the first words.
func TestHasEscape(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c == '\\' || c < 0x20 {
				return true
			}
		}
		return false
	}
	base := []byte(strings.Repeat("é0123456789abcdef~\x7f\xff", 12))
	for i := 0; i < len(base); i++ {
		for _, c := range []byte{'\\', 0, '\n', 0x1f, 0x20, '"', 0x80} {
			b := append([]byte(nil), base...)
			b[i] = c
			b = b[:min(len(b), i+1+i%7)]
			if got, want := hasEscape(b), slow(b); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, i, got, want)
			}
		}
	}
}
