package serve

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// lineScreen draws a session's own explorer on its terminal, a line at a
// time. Bubble Tea's renderer parses every frame into cells and diffs
// them with the last (a frame of 120×40 costs more that way than drawing
// it): fifty sessions spent most of a server's CPU there. The explorer's
// frames are already exact rectangles, one string per screen row, each
// row exactly the terminal's width (tui stitches its panes so), and a
// commit changes a few rows: comparing rows as strings and rewriting the
// ones that changed is all a terminal needs. The program runs without its
// renderer; its own writes (a bell, a notification, a query) go through
// the same lock as the frames, so no sequence is cut by another.
type lineScreen struct {
	mu     sync.Mutex // draws and the close that may come from the idle timeout's goroutine
	closed bool       // the terminal is given back: nothing more is drawn
	out    *lockedWriter
	w, h   int
	rows   []string // what the terminal shows; nil: nothing known
	title  string
	modes  string // the modes set, to be unset at the end ("" before the first frame)
	buf    strings.Builder
	// untapped: a shared view's screen, which frameTap does not keep (it
	// times each session's own).
	untapped bool
}

// lockedWriter is a session's output shared by the screen and the program.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// newLineScreen draws on out. The frames' colours are the terminal's own
// already (tui.Options.Colors): nothing is brought down on the way.
func newLineScreen(out io.Writer, w, h int) *lineScreen {
	return &lineScreen{out: &lockedWriter{w: out}, w: w, h: h}
}

// writer is where the screen writes (sess without one: libraryRenderer).
func (s *lineScreen) writer(sess io.Writer) io.Writer {
	if s == nil {
		return sess
	}
	return s.out
}

// resize forgets what the terminal shows: the next frame is drawn whole.
func (s *lineScreen) resize(w, h int) {
	s.mu.Lock()
	s.w, s.h, s.rows = w, h, nil
	s.mu.Unlock()
}

// forget is for a terminal another program has had (a pager): its modes
// are set again and the next frame is drawn whole.
func (s *lineScreen) forget() {
	s.mu.Lock()
	s.rows, s.modes, s.title = nil, "", ""
	s.mu.Unlock()
}

// draw writes what differs between the terminal and v, and says whether
// anything did (a frame the terminal shows already is not written).
func (s *lineScreen) draw(v tea.View) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	b := &s.buf
	b.Reset()
	const begin = "\x1b[?2026h" // one update: terminals that know the mode show the frame at once
	b.WriteString(begin)
	if s.modes == "" {
		s.modes = "\x1b[?1049h\x1b[?25l\x1b[?2004h"
		if v.MouseMode == tea.MouseModeCellMotion {
			s.modes += "\x1b[?1002h\x1b[?1006h"
		}
		if v.ReportFocus {
			s.modes += "\x1b[?1004h"
		}
		b.WriteString(s.modes)
	}
	if s.rows == nil {
		b.WriteString("\x1b[m\x1b[H\x1b[2J")
		s.rows = make([]string, s.h)
		for i := range s.rows {
			s.rows[i] = "\x00" // unlike any row: every row is written
		}
	}
	if v.WindowTitle != s.title {
		s.title = v.WindowTitle
		b.WriteString("\x1b]2;" + s.title + "\a")
	}
	rows := strings.SplitN(v.Content, "\n", s.h+1)
	for i := 0; i < s.h; i++ {
		row := ""
		if i < len(rows) {
			row = rows[i]
		}
		if row == s.rows[i] {
			continue
		}
		cut, col, sgr := rowCut(s.rows[i], row)
		s.rows[i] = row
		b.WriteString("\x1b[")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte(';')
		b.WriteString(strconv.Itoa(col + 1))
		if cut == 0 {
			b.WriteString("H\x1b[m\x1b[2K")
		} else {
			b.WriteString("H\x1b[m\x1b[K") // the kept cells before the cut stay
			b.WriteString(sgr)
		}
		b.WriteString(row[cut:])
		b.WriteString("\x1b[m")
	}
	if b.Len() == len(begin) {
		return false
	}
	b.WriteString("\x1b[?2026l")
	io.WriteString(s.out, b.String())
	if frameTap != nil && !s.untapped {
		frameTap.wrote(s, time.Now(), b.String())
	}
	return true
}

// terminalReset undoes every mode the explorer sets (the colours, focus
// and mouse reporting, bracketed paste, the hidden cursor, the alternate
// screen).
const terminalReset = "\x1b[m\x1b[?1004l\x1b[?1006l\x1b[?1002l\x1b[?2004l\x1b[?25h\x1b[?1049l"

// close puts the terminal back as the session found it (once: the idle
// timeout does before its last line, the session's end after).
func (s *lineScreen) close() {
	if s == nil {
		return // Bubble Tea's renderer draws (libraryRenderer): it gives the terminal back
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.modes == "" {
		s.closed = true
		return
	}
	s.closed = true
	io.WriteString(s.out, terminalReset)
	if frameTap != nil && !s.untapped {
		frameTap.ended(s)
	}
}
