package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// heldRequests is a store whose waiting requests are not read until the
// test lets them be: the first read is held where a big store spends its
// time, and the test says when it lands.
type heldRequests struct {
	store.Source
	release chan struct{}
}

func (h heldRequests) Requests(ctx context.Context, pending bool, runs ...string) ([]store.Request, error) {
	<-h.release
	return h.Source.Requests(ctx, pending, runs...)
}

// Until the first read lands no pane says anything it does not know: each
// says it is reading, and after a moment how far the read got; "no runs"
// and "nothing waits on a human" are said only once known.
func TestFirstFrameSaysReadingUntilTheReadLands(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	held := heldRequests{Source: store.Complete(src), release: make(chan struct{})}
	clock := fixture.Now
	m := New(Options{Source: held, NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return clock }})
	t.Cleanup(func() { m.Close(); src.Close() })
	for _, size := range [][2]int{{80, 24}, {120, 32}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		screen := ansi.Strip(m.Render())
		for _, lie := range []string{"no runs", "nothing waits", "select an agent", "no context samples", "open a run"} {
			if strings.Contains(screen, lie) {
				t.Fatalf("%dx%d: before the first read the screen says %q:\n%s", size[0], size[1], lie, screen)
			}
		}
		if n := strings.Count(screen, "reading the store…"); n != 6 && !(size[0] < 100 && n >= 3) {
			t.Fatalf("%dx%d: %d panes say they are reading:\n%s", size[0], size[1], n, screen)
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 32})

	got := make(chan tea.Msg, 1)
	go func() { got <- loadAll(m.src)() }()
	deadline := time.Now().Add(30 * time.Second)
	for m.src.reading.now() != "what waits on a human" {
		if time.Now().After(deadline) {
			t.Fatalf("the read never reached the requests: %q", m.src.reading.now())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := ansi.Strip(m.Render()); strings.Contains(s, "so far") {
		t.Fatalf("a read of a moment says how far it got:\n%s", s)
	}
	clock = clock.Add(3 * time.Second)
	s := ansi.Strip(m.Render())
	if !strings.Contains(s, "what waits on a human") || !strings.Contains(s, "for 3s so far") {
		t.Fatalf("a long read does not say how far it got:\n%s", s)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if s := ansi.Strip(m.Render()); strings.Count(s, "what waits on a human") < 3 || strings.Count(s, "for 3s so far") < 3 {
		t.Fatalf("at 80x24 the panes do not say how far the read got:\n%s", s)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 32})
	close(held.release)
	msg := <-got
	m.Settle(msg, cmdTimeout)
	s = ansi.Strip(m.Render())
	if strings.Contains(s, "reading the store") {
		t.Fatalf("the panes still say reading after the read landed:\n%s", s)
	}
	if !strings.Contains(s, "6 Approvals") || !strings.Contains(s, "Coordinate the v2.0") {
		t.Fatalf("the runs are not on screen after the read:\n%s", s)
	}
}
