package cli

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/vigil-run/vigil/tui"
)

// notifyFor works out how this terminal takes notices: its desktop
// notification sequence, and inside tmux whether tmux passes it through.
func (a *app) notifyFor() tui.Notify {
	allows := a.getenv("TMUX") != "" && tmuxAllowsPassthrough()
	d, tmux := tui.DetectDesktop(a.getenv, allows)
	return tui.Notify{Desktop: d, Tmux: tmux}
}

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
