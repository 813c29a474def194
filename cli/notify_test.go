package cli

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vigil-run/vigil/tui"
)

// tmux is asked whether it passes sequences through only where the answer
// decides what is sent (inside tmux, an outer terminal with a known
// notification sequence), and at most once: the question is a process
// started before the explorer's first frame.
func TestTmuxIsAskedOnlyWhereItMatters(t *testing.T) {
	defer func(f func() bool) { tmuxPassthrough = f }(tmuxPassthrough)
	for _, c := range []struct {
		name   string
		env    []string
		answer bool
		asked  int32
		want   tui.Notify
	}{
		{"outside tmux", []string{"TERM=xterm-kitty"}, true, 0, tui.Notify{Desktop: tui.DesktopOSC99}},
		{"tmux, no known sequence", []string{"TMUX=/tmp/t,1,0", "TERM=tmux-256color"}, true, 0, tui.Notify{}},
		{"tmux passing kitty's through", []string{"TMUX=/tmp/t,1,0", "TERM=tmux-256color", "KITTY_WINDOW_ID=3"}, true, 1,
			tui.Notify{Desktop: tui.DesktopOSC99, Tmux: true}},
		{"tmux keeping kitty's", []string{"TMUX=/tmp/t,1,0", "TERM=tmux-256color", "KITTY_WINDOW_ID=3"}, false, 1, tui.Notify{}},
	} {
		var asked atomic.Int32
		tmuxPassthrough = func() bool { asked.Add(1); return c.answer }
		a := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, c.env)
		a.askPassthrough() // as the explorer does before it opens the store
		for range 2 {
			if got := a.notifyFor(); got != c.want {
				t.Errorf("%s: notices %+v, want %+v", c.name, got, c.want)
			}
		}
		if got := asked.Load(); got != c.asked {
			t.Errorf("%s: tmux asked %d times, want %d", c.name, got, c.asked)
		}
	}
}
