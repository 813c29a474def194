package serve

import (
	"io"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// seatsOf is every seat of every mirror running now.
func seatsOf(s *Server) []*mirrorSeat {
	s.mirrors.mu.Lock()
	defer s.mirrors.mu.Unlock()
	var seats []*mirrorSeat
	for _, m := range s.mirrors.m {
		m.out.mu.Lock()
		for seat := range m.out.ws {
			seats = append(seats, seat)
		}
		m.out.mu.Unlock()
	}
	return seats
}

// A watcher whose client stops reading (golang.org/x/crypto/ssh's, its
// output never read, so its SSH window fills) holds nobody else: sessions
// keep joining its view and drawing, a watcher of it presses a key and
// gets an explorer of its own, a session of another role opens, and the
// stalled seat queues a bounded amount. When its client reads again it
// gets a whole frame.
func TestStalledViewerHoldsNobody(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.RatePerMinute = 100000 })
	const w, h = 500, 200 // the largest frames: the window fills soonest
	c, err := dial(ts, ts.viewer)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stalled, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := stalled.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out, err := stalled.StdoutPipe() // not read until the end
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.StdinPipe(); err != nil { // open: no end of input
		t.Fatal(err)
	}
	if err := stalled.Shell(); err != nil {
		t.Fatal(err)
	}

	// Each session joining the view makes it draw a whole frame for every
	// seat: the stalled client's window (x/crypto's 2 MB) is full after
	// a few dozen. The joiners share one connection.
	jc, err := dial(ts, ts.viewer)
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	full := false
	for i := 0; i < 200 && !full; i++ {
		joinOnce(t, jc, w, h)
		for _, seat := range seatsOf(ts.srv) {
			if _, _, drops := seat.queued(); drops > 0 {
				full = true
			}
		}
	}
	if !full {
		for _, seat := range seatsOf(ts.srv) {
			a, b, c := seat.queued()
			t.Logf("seat %p: %d %d %d", seat, a, b, c)
		}
		t.Fatal("the stalled seat never fell behind: the test did not fill its window")
	}
	for _, seat := range seatsOf(ts.srv) {
		if waiting, writing, _ := seat.queued(); waiting+writing > 2*seatQueue {
			t.Errorf("a seat holds %d bytes waiting and %d being written", waiting, writing)
		}
	}

	// Others are not held: a watcher of the view joins, presses a key and
	// has its own explorer; an approver's session opens.
	watcher := openTerm(t, ts, ts.viewer, w, h)
	watcher.waitFor("shared viewer view", 30*time.Second)
	watcher.typ("3")
	watcher.waitFor("vera@laptop (viewer)", 30*time.Second)
	approver := openTerm(t, ts, ts.approve, 120, 40)
	approver.waitFor("shared approver view", 30*time.Second)

	// The stalled client reads again: it is drawn whole.
	scr := newScreen(w, h)
	go io.Copy(scr, out)
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := scr.String()
		if contains(s, "Coordinate the v2.0 release") && contains(s, "shared viewer view") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled client, reading again, was not drawn whole:\n%s", tail(s, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// joinOnce opens a watching session on c and closes it once it has been
// sent a frame's worth.
func joinOnce(t *testing.T, c *gossh.Client, w, h int) {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out, _ := s.StdoutPipe()
	s.StdinPipe()
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		n, buf := 0, make([]byte, 32<<10)
		for n < 20<<10 {
			k, err := out.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
		got <- n
	}()
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("a session joining the view was sent no frame within 30s")
	}
}
