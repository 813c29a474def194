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
	// eager draws on any message at once, unless a frame was written less
	// than every ago (then as the rest): a shared view, whose one frame
	// costs the server little for all its sessions.
	eager bool
	// takesText is whether the explorer has a field taking text, as of
	// its last update: the session's input reader reads it (paster).
	takesText atomic.Bool

	ready     chan struct{} // closed once the model has loaded the store
	readyOnce sync.Once
}

type repaintMsg struct{}

// redrawMsg asks for the whole frame at once, modes and all (a shared
// view's new seat, or one that fell behind, has nothing of it).
type redrawMsg struct{}

func newPaced(m *tui.Model, every, settle time.Duration) *paced {
	return &paced{m: m, every: every, settle: settle, ready: make(chan struct{})}
}

func (p *paced) Init() tea.Cmd { return p.m.Init() }

func (p *paced) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case repaintMsg:
		p.pending = false
		p.now = p.dirty
		return p, nil
	case redrawMsg:
		if p.screen != nil {
			p.screen.forget()
		}
		p.now = true
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
	if p.eager && time.Since(p.last) >= p.every {
		p.now = true
		return p, cmd
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
	p.dirty, p.now = false, false
	wrote := true
	if p.screen != nil {
		wrote = p.screen.draw(p.view)
	}
	// An eager view's frame that changed nothing on screen (a wakeup
	// whose read has not come back) is no frame: the change it waits
	// for is drawn at once when it comes.
	if wrote || !p.eager {
		p.last = time.Now()
		p.frames++
	}
	return p.view
}
