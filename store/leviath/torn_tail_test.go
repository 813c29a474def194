package leviath

import (
	"encoding/binary"
	"strings"
	"testing"

	iofixture "github.com/vigil-run/vigil/internal/testkit/fixture"
)

// A journal whose last frame is torn (it promises 4096 bytes, 10 are
// there) is read again on every refresh while its writer may still
// complete it. Once the run's own facts say nothing will append to it
// again, a row and Problems say the tail is torn: is_terminal_run in
// leviath-runtime's persistence_bridge.rs (complete, error, cancelled: no
// further snapshots; append_record ignores a failed write_all and goes
// on, so the meta can move on past a torn frame), or an owner process on
// this machine that is gone.
func TestTornTailOnceTheWriterIsGone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gone  func(g *genRun)
		wants string
	}{
		{"the run completed", func(g *genRun) { g.meta.status, g.meta.updated = "complete", t0+520; g.writeMeta() },
			"the run is complete"},
		{"its process is gone", func(g *genRun) {
			pid, err := iofixture.DeadPID()
			if err != nil {
				t.Fatal(err)
			}
			g.meta.pid, g.meta.updated = int64(pid), t0+520
			g.writeMeta()
		}, "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx, s := openFx(t)
			m := baseMeta("stuck-1785427500-0d0d0d0d0d0d", "stuck", "A run whose last write tore", t0+500)
			g := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
			g.meta.iteration, g.meta.prompt, g.meta.completion = 1, 400, 20
			g.progress(t0+505, g.appendD("conversation", turnE("One whole turn.")))
			c := head(t, s)
			var torn [18]byte
			binary.BigEndian.PutUint64(torn[:8], 4096)
			copy(torn[8:], `{"Progress`)
			g.appendBytes(torn[:])
			g.meta.updated = t0 + 510
			g.writeMeta()
			// The writer may be mid-append: nothing is said.
			if ch := changes(t, s, &c); len(ch.Steps) != 0 {
				t.Fatalf("a frame still being written gave rows: %v", rowsOf(ch.Steps))
			}
			for _, p := range s.Problems() {
				if strings.Contains(p.Error(), "stuck-") {
					t.Fatalf("a frame still being written is a problem: %v", p)
				}
			}

			tc.gone(g)
			ch := changes(t, s, &c)
			var note string
			for _, r := range ch.Steps {
				if strings.Contains(r.Decision, "torn") {
					note = r.Decision
				}
			}
			if !strings.Contains(note, "promises 4096 bytes and 10 are there") || !strings.Contains(note, tc.wants) {
				t.Errorf("the row: %q; rows %v", note, rowsOf(ch.Steps))
			}
			var said bool
			for _, p := range s.Problems() {
				said = said || strings.Contains(p.Error(), "stuck-") && strings.Contains(p.Error(), "torn last frame")
			}
			if !said {
				t.Errorf("Problems does not name the torn tail: %v", s.Problems())
			}
			if ch := changes(t, s, &c); len(ch.Steps) != 0 {
				t.Errorf("said twice: %v", rowsOf(ch.Steps))
			}
		})
	}
}
