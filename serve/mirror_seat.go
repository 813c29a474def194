package serve

import (
	"io"
	"sync"
	"time"
)

// seatQueue is the most a mirror's seat may have waiting to be written
// (more when one frame alone is larger: a whole frame is never cut). A
// seat past it drops what waits and what comes, until its client has
// taken what was being written; it then gets its terminal's modes and a
// whole frame again.
const seatQueue = 256 << 10

// seatRedrawEvery is how often at most a seat that fell behind asks its
// mirror for a whole frame (drawn for every seat of the mirror).
const seatRedrawEvery = time.Second

// mirrorSeat is one session at a mirror: its frames wait here and are
// written by its own goroutine.
type mirrorSeat struct {
	w      io.Writer
	redraw func()

	mu      sync.Mutex
	buf     []byte
	behind  bool // bytes were dropped: a whole frame is owed once it drains
	dead    bool // a write failed: the session is gone
	drops   int  // times it fell behind (tests)
	writing int  // bytes of the write in flight (tests)
	wake    chan struct{}
	quit    chan struct{}
	done    chan struct{} // closed when run returns
	once    sync.Once
}

// newSeat is a seat writing to w; start it once its redraw is set.
func newSeat(w io.Writer) *mirrorSeat {
	return &mirrorSeat{w: w, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// enqueue adds p to what the seat has to write, or drops it.
func (s *mirrorSeat) enqueue(p []byte) {
	s.mu.Lock()
	switch {
	case s.dead, s.behind:
	case len(s.buf) > 0 && len(s.buf)+len(p) > seatQueue:
		s.buf, s.behind = nil, true
		s.drops++
	default:
		s.buf = append(s.buf, p...)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *mirrorSeat) stop() { s.once.Do(func() { close(s.quit) }) }

func (s *mirrorSeat) run() {
	defer close(s.done)
	var lastRedraw time.Time
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		}
		for {
			s.mu.Lock()
			b := s.buf
			s.buf = nil
			if len(b) == 0 && s.behind {
				s.mu.Unlock()
				if wait := seatRedrawEvery - time.Since(lastRedraw); wait > 0 {
					select {
					case <-s.quit:
						return
					case <-time.After(wait):
					}
				}
				s.mu.Lock()
				s.behind, s.buf = false, []byte(terminalSetup)
				s.mu.Unlock()
				lastRedraw = time.Now()
				if s.redraw != nil {
					s.redraw()
				}
				continue
			}
			s.writing = len(b)
			s.mu.Unlock()
			if len(b) == 0 {
				break
			}
			_, err := s.w.Write(b)
			s.mu.Lock()
			s.writing = 0
			if err != nil {
				s.dead, s.buf = true, nil
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// queued is what the seat holds: waiting, and being written (tests).
func (s *mirrorSeat) queued() (waiting, writing, drops int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf), s.writing, s.drops
}
