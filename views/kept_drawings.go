package views

import (
	"fmt"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// keptDrawings keeps the drawings (timeline rows, tree lines) of the last
// frame and of this one by everything they are drawn from, so a drawing
// whose key held is reused. shared is the drawings made lately by any pane
// of this process, for vigil serve's sessions that show the same agent.
type keptDrawings[K comparable] struct {
	last, now map[K]string
}

// frame starts a frame's drawing: each frame keeps only what it drew.
func (m *keptDrawings[K]) frame() {
	m.last, m.now = m.now, m.last
	clear(m.now)
}

// get gives k's drawing, kept or shared, or draws it. With check, a kept
// drawing is drawn again and must be the same: an input the key does not
// know of panics, named by what.
func (m *keptDrawings[K]) get(k K, shared *textfmt.Memo[K, string], check bool, what string, draw func() string) string {
	s, ok := m.now[k]
	if !ok {
		s, ok = m.last[k]
	}
	if ok {
		checkKept(check, what, " kept", s, draw)
	} else if s, ok = shared.Get(k); ok {
		checkKept(check, what, " kept by another session", s, draw)
	} else {
		s = draw()
		shared.Put(k, s)
	}
	if m.now == nil {
		m.now, m.last = map[K]string{}, map[K]string{}
	}
	m.now[k] = s
	return s
}

func checkKept(check bool, what, how, kept string, draw func() string) {
	if !check {
		return
	}
	if fresh := draw(); fresh != kept {
		panic(fmt.Sprintf("%s%s, but its inputs changed unkeyed:\nkept: %q\nnow:  %q", what, how, kept, fresh))
	}
}
