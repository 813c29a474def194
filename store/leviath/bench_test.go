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
