package tui

import (
	"strings"

	"github.com/vigil-run/vigil/views"
)

// A frame redraws only the panes whose drawing may have changed since they
// were last drawn. A commit moves the timeline, the step and the tree; the
// runs list moves a few times a second, the queue and the drift pane
// rarely: drawn on every frame anyway, fifty sessions of vigil serve spent
// a third of their server's CPU drawing what was already on screen.
//
// A pane's drawing follows from its revision (moved by every change to its
// state and to the data it reads as it draws: views/revision.go), its
// size, its focus, the theme, and the clock as far as it reads it (its
// Clock): the cache keys on those and is never told anything.

// drawEveryMessage draws a frame after every message: the tests turn it on,
// so each of them draws through the cache what a terminal would be shown.
var drawEveryMessage = false

// paneDrawn is a pane's last drawing and what it was drawn from.
type paneDrawn struct {
	key   paneKey
	lines []string
	ok    bool
}

// paneKey is everything a pane's drawing follows from.
type paneKey struct {
	rev     uint64
	w, h    int
	focused bool
	theme   *views.Theme
	clock   int64
}

// paneLines is pane p's drawing: the last one if nothing it is drawn from
// changed since.
func (m *Model) paneLines(p pane) []string {
	if m.reading() {
		m.drawn[p] = paneDrawn{} // drawn again once read
		return m.readingPane(p)
	}
	r, pn := m.rects[p], m.panes[p]
	key := paneKey{rev: pn.Rev(), w: r.w, h: r.h, focused: p == m.focus, theme: m.env.Theme, clock: pn.Clock(m.env.Now())}
	d := &m.drawn[p]
	if d.ok && d.key == key {
		return d.lines
	}
	*d = paneDrawn{key: key, lines: strings.Split(pn.View(key.focused), "\n"), ok: true}
	m.paneDraws[p]++
	return d.lines
}
