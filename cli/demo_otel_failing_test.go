package cli

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/tui"
)

// `demo --otel URL` with nothing listening: the explorer's status bar says
// the export is failing while the explorer is open, not only at quit.
func TestDemoOtelFailingShowsInStatusBar(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: taken, then let go.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()

	var bar string
	h := newHarness(t)
	h.explore = func(ctx context.Context, a *app, opt tui.Options) error {
		opt.NoWatch, opt.NoTick, opt.NoColor = true, true, true
		m := tui.New(opt)
		defer m.Close()
		m.Settle(tea.WindowSizeMsg{Width: 120, Height: 32}, time.Second)
		m.RunCmd(m.Init(), time.Second)
		waitFor(t, 60*time.Second, "the status bar to say the export fails", func() bool {
			lines := strings.Split(ansi.Strip(m.Render()), "\n")
			bar = lines[len(lines)-1]
			return strings.Contains(bar, "OTLP export failing")
		})
		return nil
	}
	r := h.run("demo", "--speed", "20", "--seed", "3", "--otel", url)
	if !strings.Contains(bar, "connection refused") {
		t.Fatalf("the status bar does not say why: %q", bar)
	}
	// What the export logged is still written once the explorer quits.
	contains(t, r.stderr, "connection refused; retrying in")
}
