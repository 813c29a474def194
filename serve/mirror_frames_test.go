package serve

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/tui"
)

// A shared view is drawn as an own explorer is (lineScreen): each frame
// one synchronized update (mode 2026) written when it is drawn, a commit's
// frame only the rows it changed; a session joining the view gets a whole
// frame, and the sessions already there end up showing what it shows.
// Before, Bubble Tea's renderer drew it at its next tick, unsynchronized.
func TestSharedViewIsDrawnRowByRow(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.viewer, 120, 40)
	a.waitFor("Coordinate the v2.0 release", 30*time.Second)
	a.waitFor("shared viewer view", 30*time.Second)
	w, err := harness.OpenWriter(ts.store)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mark := a.mark()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "watched-step-five", Result: "ok", Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	a.waitFor("watched-step-five", 30*time.Second)
	after := a.out.String()[mark:]
	at := strings.Index(after, "watched-step-five")
	begin := strings.LastIndex(after[:at], "\x1b[?2026h")
	if begin < 0 || !strings.Contains(after[at:], "\x1b[?2026l") {
		t.Fatalf("the commit's row was not drawn inside a synchronized update: %q", tail(after, 2000))
	}
	frame := after[begin : at+strings.Index(after[at:], "\x1b[?2026l")]
	if strings.Contains(frame, "\x1b[2J") || len(rowMoves.FindAllString(frame, -1)) >= 40 {
		t.Errorf("the commit's frame drew the whole screen again, not the rows it changed: %q", frame)
	}

	b := openTerm(t, ts, ts.viewer, 120, 40)
	b.waitFor("watched-step-five", 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for a.scr.String() != b.scr.String() {
		if time.Now().After(deadline) {
			t.Fatalf("the two watchers of one view show different screens:\n%s\n----\n%s", a.scr.String(), b.scr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An eager view (a shared one) draws a message at once when its last frame
// is a frame's time old, and a draw that changed nothing on the terminal
// is no frame: the change it waited for is drawn at once when it comes,
// not a frame's time later. A paced view that is not eager waits, as
// before.
func TestEagerViewDrawsAtOnce(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := openStore(path, true)
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Options{Source: src, StoreLabel: "eager"})
	defer m.Close()
	var out bytes.Buffer
	const every = 40 * time.Millisecond
	p := newPaced(m, every, 5*time.Millisecond)
	p.eager = true
	p.screen = newLineScreen(&out, 80, 24)
	p.now = true
	p.View()
	if p.frames != 1 || out.Len() == 0 {
		t.Fatalf("the first frame: %d frames, %d bytes", p.frames, out.Len())
	}
	// The same frame again writes nothing and is not counted, so the
	// pacing still counts from the first.
	first := p.last
	for i := 0; ; i++ {
		out.Reset()
		p.now = true
		p.View()
		if out.Len() == 0 {
			break
		}
		if i > 5 {
			t.Fatalf("the view keeps changing: %q", out.String())
		}
		first = p.last
	}
	if p.last != first {
		t.Errorf("a frame that changed nothing moved the pacing")
	}
	time.Sleep(every + 5*time.Millisecond)
	type nothing struct{}
	p.Update(nothing{})
	if !p.now || p.pending {
		t.Errorf("an eager view a frame's time after its last frame did not draw at once (now %v, pending %v)", p.now, p.pending)
	}
	p.View()
	p.Update(nothing{})
	if !p.now {
		t.Errorf("after a draw that changed nothing, the next message waits for a frame that was never written")
	}

	lazy := newPaced(m, every, 5*time.Millisecond)
	lazy.screen = newLineScreen(&bytes.Buffer{}, 80, 24)
	time.Sleep(every + 5*time.Millisecond)
	lazy.Update(nothing{})
	if lazy.now || !lazy.pending {
		t.Errorf("a view that is not eager drew at once (now %v, pending %v)", lazy.now, lazy.pending)
	}
}
