package views

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

func bigTimeline(n int) *Timeline {
	env := &Env{Theme: NewTheme(true, false), Keys: keymap.Default(), Now: time.Now}
	steps := make([]store.Step, n)
	tools := []string{"read_file", "run", "grep", "spawn_agent"}
	for i := range steps {
		tool := tools[i%len(tools)]
		steps[i] = store.Step{RowID: int64(i + 1), Number: i + 1, Decision: fmt.Sprintf("ran check %d", i+1),
			ToolCall: fmt.Sprintf(`%s:{"cmd":"make check-%d"}`, tool, i+1), Tokens: 100}
	}
	p := NewTimeline(env)
	p.SetSize(120, 30)
	p.Load("1", "#1 big", steps, true)
	return p
}

// BenchmarkTimelineSearchKey is one key typed into a search of a 100 k
// step timeline: every row is looked at again (what / costs per key).
func BenchmarkTimelineSearchKey(b *testing.B) {
	p := bigTimeline(100_000)
	p.Key(tea.KeyPressMsg{Code: '/', Text: "/"})
	p.Key(tea.KeyPressMsg{Code: '9', Text: "9"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := []rune{'9', '8'}[i%2]
		p.Key(tea.KeyPressMsg{Code: tea.KeyBackspace})
		p.Key(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// BenchmarkTimelineStepFilter is one press of the step filter on a 100 k
// step timeline: the facets worked out and the rows kept.
func BenchmarkTimelineStepFilter(b *testing.B) {
	p := bigTimeline(100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Key(tea.KeyPressMsg{Code: 't', Text: "t"})
	}
}
