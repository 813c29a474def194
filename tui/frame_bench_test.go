package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store/ioharness"
)

// BenchmarkExplorerFrame is one frame of the explorer vigil serve draws for
// each session that has pressed a key (serve's BenchmarkServe50Sessions):
// the fixture store at 120×40 with the timeline focused, in colour and
// without (the bench's NO_COLOR). "cursor" moves the timeline's cursor
// (a key through Update) before each frame, as a user browsing; "idle" draws again with nothing
// changed, as a session whose frame a commit elsewhere woke (each pane's
// drawing is kept: pane_cache.go).
//
//	go test ./tui -run '^$' -bench ExplorerFrame -benchmem
func BenchmarkExplorerFrame(b *testing.B) {
	path, err := fixture.Build(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, noColor := range []bool{true, false} {
		name := "colour"
		if noColor {
			name = "nocolor"
		}
		src, err := ioharness.OpenReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: noColor})
		cmdTimeout = time.Minute
		settle(m, tea.WindowSizeMsg{Width: 120, Height: 40})
		runCmd(m, m.Init())
		if !m.loaded {
			b.Fatalf("model did not load: %s", m.problem)
		}
		settle(m, keyMsg("3"))
		b.Run(name+"/cursor", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m.Update(keyMsg([]string{"k", "j"}[i%2])) // the panes it moves are drawn again
				if len(m.Render()) == 0 {
					b.Fatal("empty frame")
				}
			}
		})
		b.Run(name+"/idle", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if len(m.Render()) == 0 {
					b.Fatal("empty frame")
				}
			}
		})
		src.Close()
	}
}
