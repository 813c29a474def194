package leviath

import (
	"fmt"
	"testing"
)

// A long run: 3,000 jobs (each a Progress with the whole RunMeta and one
// appended entry), opened cold.
func BenchmarkOpenLongJournal(b *testing.B) {
	dir := b.TempDir()
	fx := &fixture{home: dir, runs: dir + "/runs", gens: map[string]*genRun{}}
	m := baseMeta("long-1785427200-0123456789ab", "long", "A long run", t0)
	g := newGenRun(b, fx.runs, m, false, stdRegions(m.task)...)
	var buf []byte
	for i := 0; i < 3000; i++ {
		g.meta.prompt += 1000
		conv := g.region("conversation")
		if len(conv.entries) > 40 { // a sliding window: keep it small, as Leviath does
			conv.entries = conv.entries[len(conv.entries)-40:]
		}
		buf = append(buf, g.progressFrame(t0+int64(i), g.appendD("conversation",
			turnE(fmt.Sprintf("turn %d: %s", i, "some model text that is about a line long, like most turns are")),
		))...)
	}
	g.appendBytes(buf)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(fx.runs)
		if err != nil {
			b.Fatal(err)
		}
		if st, _ := s.Steps(bg, m.runID); len(st) != 3001 {
			b.Fatalf("%d rows", len(st))
		}
		s.Close()
	}
}

// What vigil agent pays per refresh of a remote reader: the token read
// back, Changes after it (nothing new), the next token written, on a runs
// directory of n runs (each a few jobs long, one in four waiting).
func BenchmarkCursorToken(b *testing.B) {
	for _, n := range []int{5, 200} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			runs := dir + "/runs"
			for i := 0; i < n; i++ {
				m := baseMeta(fmt.Sprintf("r%d-%d-%012x", i, t0+int64(i), i), "r", fmt.Sprintf("run %d", i), t0+int64(i))
				g := newGenRun(b, runs, m, true, stdRegions(m.task)...)
				for j := 0; j < 3; j++ {
					g.meta.prompt += 100
					g.progress(t0+int64(i+j), g.appendD("conversation", turnE(fmt.Sprintf("turn %d", j))))
				}
				if i%4 == 0 {
					g.status(t0+int64(i+5), "waiting_input")
				}
			}
			s, err := Open(runs)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			cur, err := s.Head(bg)
			if err != nil {
				b.Fatal(err)
			}
			tok, err := s.EncodeCursor(cur)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				back, err := s.DecodeCursor(tok)
				if err != nil {
					b.Fatal(err)
				}
				ch, next, err := s.Changes(bg, back)
				if err != nil || !ch.Empty() {
					b.Fatalf("%+v %v", ch, err)
				}
				if tok, err = s.EncodeCursor(next); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tok)), "token-bytes")
		})
	}
}
