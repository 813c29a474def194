package serve

import (
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/tui"
)

// paced draws a session's explorer at most once a frame. Bubble Tea asks
// for the whole view after every message, and a commit brings several (its
// changes, then the counts, the detail, the activity, each read once for
// every session by the hub): drawn each time, fifty sessions spend their
// server's cores on frames nobody sees. A key press or a resize is drawn at
// once. Anything else marks the view stale and draws it when a repaint
// comes: settle after the first message (the reads a commit starts land in
// the same frame), and never sooner than every after the last frame. So a
// commit costs a session one frame, and what it shows is never older than
// settle+every.
type paced struct {
	m       *tui.Model
	every   time.Duration
	settle  time.Duration
	last    time.Time // when the view was last drawn
	view    tea.View
	drawn   bool
	dirty   bool        // updated since the view was drawn
	now     bool        // draw at the next View
	pending bool        // a repaint is on its way
	frames  int         // frames drawn (tests)
	screen  *lineScreen // draws each frame on the session (nil: Bubble Tea's renderer does)
	// takesText is whether the explorer has a field taking text, as of
	// its last update: the session's input reader reads it (paster).
	takesText atomic.Bool

	ready     chan struct{} // closed once the model has loaded the store
	readyOnce sync.Once
}

type repaintMsg struct{}

func newPaced(m *tui.Model, every, settle time.Duration) *paced {
	return &paced{m: m, every: every, settle: settle, ready: make(chan struct{})}
}

func (p *paced) Init() tea.Cmd { return p.m.Init() }

func (p *paced) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(repaintMsg); ok {
		p.pending = false
		p.now = p.dirty
		return p, nil
	}
	_, cmd := p.m.Update(msg)
	p.dirty = true
	if p.screen != nil && tui.TookTerminal(msg) {
		p.screen.forget()
		p.now = true
	}
	if p.m.Loaded() {
		p.readyOnce.Do(func() { close(p.ready) })
	}
	p.takesText.Store(p.m.TakesText())
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if p.screen != nil {
			p.screen.resize(msg.Width, msg.Height)
		}
		p.now = true
		return p, cmd
	case tea.KeyPressMsg, tea.MouseClickMsg, tea.MouseWheelMsg:
		// At once, but for keys that come faster than frames (a paste
		// into no field, a key held down): those are drawn as the rest,
		// a frame at most every frameEvery.
		if time.Since(p.last) >= p.every {
			p.now = true
			return p, cmd
		}
	}
	if p.pending {
		return p, cmd
	}
	p.pending = true
	wait := max(p.settle, p.every-time.Since(p.last))
	return p, tea.Batch(cmd, tea.Tick(wait, func(time.Time) tea.Msg { return repaintMsg{} }))
}

func (p *paced) View() tea.View {
	if p.drawn && !p.now {
		return p.view
	}
	p.view, p.drawn = p.m.View(), true
	p.last, p.dirty, p.now = time.Now(), false, false
	p.frames++
	if p.screen != nil {
		p.screen.draw(p.view)
	}
	return p.view
}
