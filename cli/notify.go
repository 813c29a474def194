package cli

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/tui"
)

// notifyFor works out how this terminal takes notices: its desktop
// notification sequence, and inside tmux whether tmux passes it through.
func (a *app) notifyFor() tui.Notify {
	d, tmux := tui.DetectDesktop(a.getenv, a.passthrough())
	return tui.Notify{Desktop: d, Tmux: tmux}
}

// askPassthrough starts asking tmux whether it passes sequences through,
// where the answer can matter: inside tmux, with an outer terminal whose
// notification sequence is known (without one nothing is wrapped). Asking
// is a process started (5–20 ms), so the explorer asks while it opens the
// store rather than before its first frame; passthrough waits for the
// answer, asking first if nothing did.
func (a *app) askPassthrough() {
	a.passOnce.Do(func() {
		if a.getenv("TMUX") == "" {
			return
		}
		if d, _ := tui.DetectDesktop(a.getenv, true); d == tui.DesktopNone {
			return
		}
		ch := make(chan bool, 1)
		go func() { ch <- tmuxPassthrough() }()
		a.passAnswer = sync.OnceValue(func() bool { return <-ch })
	})
}

func (a *app) passthrough() bool {
	a.askPassthrough()
	return a.passAnswer != nil && a.passAnswer()
}

// tmuxPassthrough is how tmux is asked (tests count the questions).
var tmuxPassthrough = tmuxAllowsPassthrough

// tmuxAllowsPassthrough asks the tmux vigil runs in whether its pane lets
// escape sequences through to the outer terminal (allow-passthrough, tmux
// 3.3). An older tmux, or one that cannot be asked, does not.
func tmuxAllowsPassthrough() bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", "display-message", "-p", "#{allow-passthrough}").Output()
	if err != nil {
		return false
	}
	v := strings.TrimSpace(string(out))
	return v == "1" || v == "on" || v == "all"
}
