package serve

import (
	"io"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

// A session that has not pressed a key shows what every other such
// session of the same store, role and terminal shows: the explorer's
// opening view, following the store. Those sessions share one explorer,
// drawn once a frame, its bytes written to each of them (as tmux draws one
// window for every client attached to it). The first key a session sends
// gives it an explorer of its own, opened where the shared one is, and the
// key goes to it. Fifty people watching a store cost the server one
// explorer's frames, not fifty.

// mirrorFrameEvery paces a shared explorer: one frame drawn for all its
// sessions is cheap, so it draws as often as a 60 Hz display. It is eager
// (paced.eager): it draws what comes at once, and waits (no settle) only
// for the rest of a frame's time after the last frame it wrote.
const (
	mirrorFrameEvery  = 16 * time.Millisecond
	mirrorFrameSettle = 0
)

// mirrorKey is what must be equal for two sessions to show the same bytes.
type mirrorKey struct {
	hub     *Hub
	w, h    int
	term    string
	noColor bool
	role    Role
	clamped bool // the terminal is larger than w×h (clampSize)
}

// mirror is one shared explorer and the sessions it draws on.
type mirror struct {
	key    mirrorKey
	model  *tui.Model
	prog   *tea.Program
	out    *fanout
	screen *lineScreen // draws each frame on every seat when it is drawn
	done   chan struct{}
}

// fanout hands each frame to every seat of a mirror. It never writes to a
// session itself: a seat whose client reads slowly or not at all (its SSH
// window full) would hold every other seat's frame, and whoever waits for
// f.mu (a session leaving, under the server's mirrors.mu) with it.
type fanout struct {
	mu sync.Mutex
	ws map[*mirrorSeat]io.Writer
}

func (f *fanout) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.ws {
		s.enqueue(p)
	}
	return len(p), nil
}

// mirrors are a server's shared explorers.
type mirrors struct {
	mu sync.Mutex
	m  map[mirrorKey]*mirror
}

// terminalSetup is what the explorer's program sent its terminal when it
// started (the alternate screen, no cursor, mouse reporting), sent to a
// session joining a mirror that is already running.
const terminalSetup = "\x1b[?1049h\x1b[?25l\x1b[?1002h\x1b[?1006h"

// join seats a session's output at the mirror for key, starting it if
// none runs; leave takes it off again.
func (s *Server) join(key mirrorKey, w io.Writer, opts []tea.ProgramOption, label, who string) (*mirror, *mirrorSeat) {
	s.mirrors.mu.Lock()
	defer s.mirrors.mu.Unlock()
	if s.mirrors.m == nil {
		s.mirrors.m = map[mirrorKey]*mirror{}
	}
	seat := newSeat(w)
	if m, ok := s.mirrors.m[key]; ok {
		seat.redraw = m.redraw
		go seat.run()
		seat.enqueue([]byte(terminalSetup))
		m.out.mu.Lock()
		m.out.ws[seat] = w
		m.out.mu.Unlock()
		m.redraw() // everything again: the new seat has nothing yet
		return m, seat
	}
	ro := s.readOnlyWhy()
	sess := Session{Who: sharedWho(key.role), Role: key.role, KeyNote: s.keyNote}
	m := &mirror{key: key, out: &fanout{ws: map[*mirrorSeat]io.Writer{seat: w}}, done: make(chan struct{})}
	m.model = tui.New(tui.Options{
		// Drawn by lineScreen, which brings no colour down: the theme is
		// built in the colours of the view's TERM.
		Colors:     mirrorColors(key),
		Source:     key.hub.View(sess, ro),
		Reopen:     func() (store.Source, error) { return key.hub.View(sess, ro), nil },
		Wakeups:    key.hub.Wakeups,
		Poll:       s.cfg.Poll,
		StoreLabel: label,
		Who:        whoClamped(who, key.clamped),
		NoColor:    key.noColor,
		Look:       s.cfg.Look,
		// One explorer's bytes for many terminals: the bell and the title,
		// and no desktop sequence that only some of them take.
		Notify: tui.Notify{NoBell: s.cfg.Notify.NoBell, NoTitle: s.cfg.Notify.NoTitle, NoDesktop: true},
		// It takes no keys; were it to decide, the server's log has it.
		Decisions: &decision.Maker{Who: sess.Who, Via: "a shared view", Log: s.audit},
	})
	// Its frames are drawn by lineScreen as an own explorer's are, and
	// written when drawn: Bubble Tea's renderer would hold each until its
	// next tick, and diff cells where the rows are already known.
	m.screen = newLineScreen(m.out, key.w, key.h)
	m.screen.untapped = true
	paced := newPaced(m.model, mirrorFrameEvery, mirrorFrameSettle)
	paced.screen, paced.eager = m.screen, true
	opts = append(opts, tea.WithInput(nil), tea.WithOutput(m.screen.out), tea.WithoutRenderer(),
		tea.WithFPS(20), tea.WithWindowSize(key.w, key.h))
	m.prog = tea.NewProgram(paced, opts...)
	seat.redraw = m.redraw
	go seat.run()
	s.mirrors.m[key] = m
	go func() {
		defer close(m.done)
		m.prog.Run()
		m.model.Close()
	}()
	return m, seat
}

// leave takes a seat off its mirror; the last one out stops it. What the
// seat is writing is let finish (a second at most: its client may not be
// reading), so that what the session writes next does not cut into it.
func (s *Server) leave(m *mirror, seat *mirrorSeat) {
	s.unseat(m, seat)
	select {
	case <-seat.done:
	case <-time.After(time.Second):
	}
}

func (s *Server) unseat(m *mirror, seat *mirrorSeat) {
	s.mirrors.mu.Lock()
	defer s.mirrors.mu.Unlock()
	m.out.mu.Lock()
	delete(m.out.ws, seat)
	empty := len(m.out.ws) == 0
	m.out.mu.Unlock()
	seat.stop()
	if empty && s.mirrors.m[m.key] == m {
		delete(s.mirrors.m, m.key)
		m.prog.Quit()
	}
}

// redraw asks the mirror for a whole frame, for every seat (one joined, or
// one that fell behind and caught up).
func (m *mirror) redraw() { go m.prog.Send(redrawMsg{}) }

// mirrorColors is the colour profile of a view's terminal, as an own
// explorer's is found from its session's (the view's key holds TERM and
// NO_COLOR, which is what its sessions share).
func mirrorColors(key mirrorKey) colorprofile.Profile {
	env := []string{"TERM=" + key.term}
	if key.noColor {
		env = append(env, "NO_COLOR=1")
	}
	return colorprofile.Env(env)
}

// Watching is how many sessions each running mirror draws on (tests).
func (s *Server) Watching() []int {
	s.mirrors.mu.Lock()
	defer s.mirrors.mu.Unlock()
	var n []int
	for _, m := range s.mirrors.m {
		m.out.mu.Lock()
		n = append(n, len(m.out.ws))
		m.out.mu.Unlock()
	}
	return n
}

func sharedWho(r Role) audit.Who { return audit.Who{Name: "a shared view"} }

// isReply reports whether input is a terminal's answer to a query (a
// colour, a cursor position, its capabilities) rather than a key: it does
// not make a session leave its mirror.
func isReply(b []byte) bool {
	s := string(b)
	for s != "" {
		switch {
		case strings.HasPrefix(s, "\x1b]"), strings.HasPrefix(s, "\x1bP"), strings.HasPrefix(s, "\x1b_"):
			end := strings.IndexAny(s[2:], "\x07\x1b")
			if end < 0 {
				return true // cut in the middle of a reply
			}
			s = s[2+end:]
			s = strings.TrimPrefix(s, "\x07")
			s = strings.TrimPrefix(s, "\x1b\\")
		case strings.HasPrefix(s, "\x1b[?"), strings.HasPrefix(s, "\x1b[>"), strings.HasPrefix(s, "\x1b[="):
			end := strings.IndexFunc(s[3:], func(r rune) bool { return r >= 0x40 && r <= 0x7e })
			if end < 0 {
				return true
			}
			s = s[3+end+1:]
		default:
			return false
		}
	}
	return true
}
