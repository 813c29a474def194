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
	out, _ := stallViewer(t, ts)
	const w, h = stallW, stallH
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

// The largest frames: a window fills soonest.
const stallW, stallH = 500, 200

// stallViewer opens a watching session whose client never reads what it
// is sent, and has sessions join its view until its seat has fallen
// behind: each joining makes the view draw a whole frame for every seat,
// and the stalled client's window (x/crypto's 2 MB) is full after a few
// dozen. It returns the stalled session's output, to read later, and the
// client's address.
func stallViewer(t *testing.T, ts *testServer) (io.Reader, string) {
	t.Helper()
	c, err := dial(ts, ts.viewer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	stalled, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := stalled.RequestPty("xterm-256color", stallH, stallW, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out, err := stalled.StdoutPipe() // not read here
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.StdinPipe(); err != nil { // open: no end of input
		t.Fatal(err)
	}
	if err := stalled.Shell(); err != nil {
		t.Fatal(err)
	}
	jc, err := dial(ts, ts.viewer)
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	for i := 0; i < 200; i++ {
		joinOnce(t, jc, stallW, stallH)
		for _, seat := range seatsOf(ts.srv) {
			if waiting, writing, drops := seat.queued(); drops > 0 {
				t.Logf("the stalled seat fell behind after %d sessions joined; it holds %d bytes waiting and %d being written", i+1, waiting, writing)
				for _, seat := range seatsOf(ts.srv) {
					if waiting, writing, _ := seat.queued(); waiting+writing > 2*seatQueue {
						t.Errorf("a seat holds %d bytes waiting and %d being written", waiting, writing)
					}
				}
				return out, c.LocalAddr().String()
			}
		}
	}
	t.Fatal("the stalled seat never fell behind: the test did not fill its window")
	return nil, ""
}

// A session whose client does not read is closed all the same when it
// has been idle for the idle timeout (its last line cannot go out), not
// only once the connection has moved no byte for a minute more.
func TestStalledViewerIsClosedWhenIdle(t *testing.T) {
	// The idle timeout must outlast filling the window, which is slow under
	// the race detector on a loaded machine: a session closed before its
	// seat fell behind would test nothing.
	ts := startServer(t, func(c *Config) { c.RatePerMinute = 100000; c.IdleTimeout = 60 * time.Second })
	_, addr := stallViewer(t, ts)
	waitLogWithin(t, ts, "session "+addr+": vera@laptop closed after", 120*time.Second)
	if n := len(seatsOf(ts.srv)); n != 0 {
		t.Errorf("%d seats left at the views", n)
	}
}

func waitLogWithin(t *testing.T, ts *testServer, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(ts.log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within %s; the log:\n%s", want, within, tail(ts.log.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

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
