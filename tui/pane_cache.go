package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/views"
)

// A frame redraws only the panes whose inputs changed since they were last
// drawn. A commit moves the timeline, the step and the tree; the runs list
// moves a few times a second, the queue and the drift pane rarely: drawn on
// every frame anyway, fifty sessions of vigil serve spent a third of their
// server's CPU drawing what was already on screen.
//
// A pane's inputs are its own state (changed only through calls the model
// makes: each such call touches it), what it reads from the model as it
// draws (the tree reads the run model and the open tree's activity, the
// timeline and drift the open agent's steps and samples: touched whenever
// those change), its size, its focus, the theme and the clock. The clock
// is the tick's: every message but the few the tail brings touches every
// pane (narrowMsg), the once-a-second tick among them, so an age on screen
// is as old as it is when nothing at all is written, a second at most.

// paneDrawn is a pane's last drawing and what it was drawn from.
type paneDrawn struct {
	key   paneKey
	lines []string
	at    time.Time // the clock it was drawn at (checkPaneCache)
	ok    bool
}

// paneKey is everything a pane's drawing follows from, besides the clock.
type paneKey struct {
	rev     uint64 // bumped by touch
	w, h    int
	focused bool
	theme   *views.Theme
	own     uint64 // the queue's own revision: a rebuild that changed nothing keeps its drawing
	quiet   bool   // the queue's footer says while its misfire guard holds keys back
	tenths  int64  // the tree's live strip counts down in tenths of a second
}

// checkPaneCache makes every frame that reuses a pane's drawing draw it
// again, at the clock it was drawn at, and panic if the two differ: a pane
// input the cache does not know of. The tui tests turn it on.
var checkPaneCache = false

// touch says these panes' inputs changed: they are drawn again.
func (m *Model) touch(ps ...pane) {
	for _, p := range ps {
		m.paneRev[p]++
	}
}

func (m *Model) touchAll() {
	for p := range m.paneRev {
		m.paneRev[p]++
	}
}

// narrowMsg is a message whose every effect on the panes is a call that
// touches them: the ones a commit brings to a session that tails a store.
// Any other message (a key, the mouse, a resize, the tick, a load, a
// decision) touches every pane.
func narrowMsg(msg tea.Msg) bool {
	switch msg.(type) {
	case signalMsg, changesMsg, statsMsg, detailDueMsg, detailMsg, activityMsg, treeEventsMsg:
		return true
	}
	return false
}

// paneLines is pane p's drawing: the last one if nothing it is drawn from
// changed since.
func (m *Model) paneLines(p pane) []string {
	r := m.rects[p]
	key := paneKey{rev: m.paneRev[p], w: r.w, h: r.h, focused: p == m.focus, theme: m.env.Theme}
	now := m.env.Now()
	switch p {
	case paneApprovals:
		key.own, key.quiet = m.approvals.Rev(), m.approvals.Quiet(now)
	case paneAgents:
		if m.treeLive {
			key.tenths = now.UnixMilli() / 100
		}
	}
	d := &m.drawn[p]
	if d.ok && d.key == key {
		if checkPaneCache {
			m.checkDrawn(p, d)
		}
		return d.lines
	}
	*d = paneDrawn{key: key, lines: strings.Split(m.panes[p].View(key.focused), "\n"), at: now, ok: true}
	m.paneDraws[p]++
	return d.lines
}

// checkDrawn draws p again at the clock its kept drawing was made at.
func (m *Model) checkDrawn(p pane, d *paneDrawn) {
	clock := m.env.Now
	m.env.Now = func() time.Time { return d.at }
	fresh := m.panes[p].View(d.key.focused)
	m.env.Now = clock
	if kept := strings.Join(d.lines, "\n"); fresh != kept {
		panic(fmt.Sprintf("pane %d drawn from its cache, but its inputs changed untouched:\nkept:\n%s\nnow:\n%s", p, kept, fresh))
	}
}
