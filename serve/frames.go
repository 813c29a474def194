package serve

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/tui"
)

// paced draws a session's explorer at most once a frame. Bubble Tea asks
// for the whole view after every message, and a commit brings several (its
// changes, then the counts, the detail, the activity): drawn each time,
// fifty sessions spend their server's cores on frames nobody sees. A key
// press or a resize is drawn at once; anything else waits for the frame's
// end, a repaint message making sure it is drawn then.
type paced struct {
	m       *tui.Model
	every   time.Duration
	last    time.Time // when the view was last drawn
	view    tea.View
	drawn   bool
	dirty   bool // updated since the view was drawn
	now     bool // draw at the next View, whatever the time
	pending bool // a repaint is on its way

	ready     chan struct{} // closed once the model has loaded the store
	readyOnce sync.Once
}

type repaintMsg struct{}

func newPaced(m *tui.Model, every time.Duration) *paced {
	return &paced{m: m, every: every, ready: make(chan struct{})}
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
	if p.m.Loaded() {
		p.readyOnce.Do(func() { close(p.ready) })
	}
	switch msg.(type) {
	case tea.KeyPressMsg, tea.WindowSizeMsg, tea.MouseClickMsg, tea.MouseWheelMsg:
		p.now = true
		return p, cmd
	}
	if wait := p.every - time.Since(p.last); wait > 0 && !p.pending {
		p.pending = true
		return p, tea.Batch(cmd, tea.Tick(wait, func(time.Time) tea.Msg { return repaintMsg{} }))
	}
	return p, cmd
}

func (p *paced) View() tea.View {
	if p.drawn && !p.now && (!p.dirty || time.Since(p.last) < p.every) {
		return p.view
	}
	p.view, p.drawn = p.m.View(), true
	p.last, p.dirty, p.now = time.Now(), false, false
	return p.view
}
