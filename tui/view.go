package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// View draws the screen. Panes are laid out by layout(); the help overlay,
// when open, is drawn over them.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	// The title is ours alone: nothing from the store reaches it (and the
	// store's file name could hold anything).
	name := filepath.Base(m.src.Path())
	if set, ok := m.src.Source.(store.StoreSet); ok {
		name = fmt.Sprintf("%d stores", len(set.Stores()))
	}
	v.WindowTitle = m.windowTitle("vigil — " + sanitize.Line(name))
	v.ReportFocus = true // bell and notifications wait while the terminal has the focus
	return v
}

// Render is the screen as a string (tests and screenshots use it): every
// frame passes sanitize.Frame, the one place all text goes through on its
// way to the terminal, so that nothing but text and the frame's own colours
// reaches it whatever a pane drew.
func (m *Model) Render() string { return safeFrame(m.render()) }

// render draws the screen. It only draws: where each pane goes was worked
// out by relayout.
func (m *Model) render() string {
	w, h := m.w, m.h
	if w == 0 || h == 0 {
		return ""
	}
	if w < minWidth || h < minHeight {
		msg := fmt.Sprintf("vigil needs at least %d×%d; this terminal is %d×%d", minWidth, minHeight, w, h)
		return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, m.env.Theme.Warning.Render(textfmt.Cut(msg, w)))
	}
	m.frames++
	var drawn [paneCount][]string
	for _, p := range m.order {
		drawn[p] = m.paneLines(p)
	}
	screen := m.stitch(drawn, w, h-1)
	screen = append(screen, m.statusBar(w))
	frame := strings.Join(screen, "\n")
	if !m.help && !m.summaryOn {
		return frame
	}
	// The overlays are the one place panes overlap: compose them on a
	// canvas, the help above the summary.
	layers := []*lipgloss.Layer{lipgloss.NewLayer(frame)}
	if m.summaryOn {
		layers = append(layers, lipgloss.NewLayer(m.summary.View(true)).X(m.summaryAt.x).Y(m.summaryAt.y).Z(1))
	}
	if m.help {
		layers = append(layers, lipgloss.NewLayer(m.helpBox.View()).X(m.helpAt.x).Y(m.helpAt.y).Z(2))
	}
	canvas := lipgloss.NewCanvas(w, h)
	return canvas.Compose(lipgloss.NewCompositor(layers...)).Render()
}

// stitch lays drawn panes side by side, row by row. The layout tiles the
// screen with exact rectangles, so a row is its panes' lines joined left
// to right — far cheaper than compositing cells.
func (m *Model) stitch(drawn [paneCount][]string, w, h int) []string {
	rows := make([]string, h)
	var b strings.Builder
	for y := 0; y < h; y++ {
		b.Reset()
		for _, p := range m.order {
			r := m.rects[p]
			if y < r.y || y >= r.y+r.h {
				continue
			}
			lines := drawn[p]
			if i := y - r.y; i < len(lines) {
				b.WriteString(lines[i])
			} else {
				b.WriteString(strings.Repeat(" ", r.w))
			}
		}
		rows[y] = b.String()
	}
	return rows
}

// statusBar: the store, the open run's state, how fresh the data is, how
// changes are noticed, and how many requests wait.
func (m *Model) statusBar(w int) string {
	// The store's path gives way before what follows it: to its name, then
	// altogether; then the least needed facts (how changes are noticed, how
	// fresh, the waiting count, the run's state), so that what is wrong with
	// the store, and why, is read whole, and ? help stays.
	if q := m.quitPrompt(); q != "" {
		return m.env.Theme.Warning.Render(textfmt.PadRight(" "+q, w)) // the one thing to read now
	}
	if m.cmd.on {
		return m.cmdlineBar(w) // cmdline.go
	}
	first := pathFull
	if w < 120 {
		first = pathName
	}
	// The parts are made once; each try only joins them.
	b := m.barParts()
	var bar string
	for mode := first; mode <= pathNone; mode++ {
		var fits bool
		if bar, fits = b.fit(w, mode, dropNothing); fits {
			return bar
		}
	}
	for drop := 5; drop >= 2; drop-- {
		var fits bool
		if bar, fits = b.fit(w, pathNone, drop); fits {
			break
		}
	}
	return bar
}

// dropNothing keeps every part of the status bar.
const dropNothing = 99

// How the status bar names the store.
const (
	pathFull = iota
	pathName
	pathNone
)

// bar is the status bar's parts, each with its priority (1: what is
// wrong, 5: how changes are noticed), made once a frame: fit joins them
// with the store named as pathMode says and without the parts of priority
// drop and above.
type bar struct {
	t         *views.Theme
	help      string
	hints     []string // the focused pane's keys (status_hints.go)
	parts     []string
	prio      []int
	path      int       // the store's part (-1: a notice took its place)
	paths     [3]string // that part for each pathMode
	aged      int       // the NOT CURRENT part that says as of when (-1: none)
	agedShort string    // that part without its age
}

func (m *Model) barParts() *bar {
	t, km := m.env.Theme, m.env.Keys
	now := m.now()
	b := &bar{t: t, path: -1, aged: -1}
	add := func(p int, s string) { b.parts, b.prio = append(b.parts, s), append(b.prio, p) }
	path := m.storeLabel()
	b.paths = [3]string{sanitize.Line(shortPath(path, 40)), sanitize.Line(shortPath(filepath.Base(path), 40)), ""}
	add(0, t.Bold.Render(" vigil"))
	if m.opt.Who != "" {
		add(1, t.Bold.Render(sanitize.Line(m.opt.Who)))
	}
	b.path = len(b.parts)
	add(6, b.paths[pathFull])
	if set, ok := m.src.Source.(store.StoreSet); ok {
		m.storesPart(set, add)
	}
	if ro, _ := m.src.ReadOnly(); ro {
		add(3, t.Muted.Render("read-only"))
	}
	if p := m.problems.barText(); p != "" {
		add(1, t.Warning.Render(p))
	}
	if r, ok := m.st.model.Run(m.st.root); ok {
		st := m.st.model.State(r.ID, now)
		live := liveness(m.st.model, r, now)
		if m.stale != "" {
			live = "as last read" // never "live" from a picture that is not current
		}
		add(2, t.StateStyle(st, r.Outcome).Render(fmt.Sprintf("%s #%s %s", views.StateGlyph(st, r.Outcome), sanitize.Line(store.DisplayID(r.ID)), live)))
	}
	switch {
	case m.stale != "" && m.loaded && !m.lastChange.IsZero(): // its age is a freshness fact (4)
		b.aged, b.agedShort = len(b.parts), t.Bad.Render("NOT CURRENT: "+sanitize.Line(m.stale))
		add(1, t.Bad.Render("NOT CURRENT (as of "+textfmt.Ago(m.lastChange, now)+"): "+sanitize.Line(m.stale)))
	case m.stale != "":
		add(1, t.Bad.Render("NOT CURRENT: "+sanitize.Line(m.stale)))
	case m.loaded && m.lastChange.IsZero():
		add(4, t.Muted.Render("no write time recorded"))
	case m.loaded:
		add(4, t.Muted.Render("updated "+textfmt.Ago(m.lastChange, now)))
	default:
		add(4, t.Muted.Render("loading…"))
	}
	switch {
	case m.opt.NoWatch, m.closed:
	case m.watcher == nil:
		add(5, t.Warning.Render("not watching"))
	case m.watcher.Mode().String() != "push":
		note := "polling"
		if m.watchNote != "" {
			note += " (" + m.watchNote + ")"
		}
		add(5, t.Warning.Render(note))
	default:
		add(5, t.Muted.Render("push"))
	}
	if n := m.st.model.Pending(); n > 0 {
		add(3, t.Waiting.Render(fmt.Sprintf("◆ %d waiting (%s)", n, km.Pane[paneApprovals].Help().Key)))
	}
	if m.problem != "" {
		add(1, t.Bad.Render(sanitize.Line(m.problem)))
	}
	if m.opt.Trouble != nil {
		if tr := m.opt.Trouble(); tr != "" {
			add(1, t.Bad.Render(sanitize.Line(tr)))
		}
	}
	if m.zoomed {
		add(4, t.Warning.Render("zoomed ("+km.Zoom.Help().Key+" restores)"))
	}
	if n := m.noticeShown(); n != "" {
		// A confirmation takes the store's place for its moment: it is
		// what the user just did, and must be seen at any width.
		b.parts[1], b.prio[1] = t.Good.Render(n), 1
		if b.path == 1 {
			b.path = -1
		}
	}
	help := km.Help.Help()
	b.help = t.Key.Render(help.Key) + t.Muted.Render(" "+help.Desc+" ")
	b.hints = m.paneHints()
	return b
}

func (b *bar) fit(w int, pathMode int, drop int) (string, bool) {
	t := b.t
	var kept []string
	for i, p := range b.parts {
		switch {
		case i == b.path:
			p = b.paths[pathMode]
		case i == b.aged && drop <= 4:
			p = b.agedShort
		}
		if p != "" && b.prio[i] < drop {
			kept = append(kept, p)
		}
	}
	left := strings.Join(kept, t.Faint.Render(" · "))
	right := b.help
	gap := w - barWidth(left) - barWidth(right)
	if gap < 1 {
		// The help key stays on screen: it is how every other key is found.
		return textfmt.Fit(left, max(w-barWidth(right)-1, 0)) + " " + right, false
	}
	return left + b.withHints(gap), true
}

// barWidth is lipgloss.Width: of one line (what the bar is made of), it is
// textfmt's, remembered across frames and sessions.
func barWidth(s string) int {
	if strings.IndexByte(s, '\n') >= 0 {
		return lipgloss.Width(s)
	}
	return textfmt.Width(s)
}

// liveness says in words what the lease says about a run.
func liveness(md *runmodel.Model, r store.Run, now time.Time) string {
	if r.Ended() {
		return views.StateLabel(store.StateFinished, r.Outcome)
	}
	l, _ := md.Lease(r.ID)
	live := md.Liveness(r.ID, now)
	switch {
	case r.Recovery != nil && (live == store.Dead || live == store.Unleased):
		return fmt.Sprintf("waits on recovery: %s at step %d", r.Recovery.Tool, r.Recovery.Step)
	case r.LeaselessDriver && live != store.Live && live != store.Lapsed:
		return "resumed without a lease: liveness unknown"
	}
	switch live {
	case store.Live:
		return "live"
	case store.Lapsed:
		return "lease lapsed"
	case store.Dead:
		if _, note := store.OwnerCheck(*l); note != "" {
			return fmt.Sprintf("driver gone (pid %d; %s)", l.OwnerPID(), note)
		}
		return fmt.Sprintf("driver gone (pid %d)", l.OwnerPID())
	case store.Foreign:
		_, note := store.OwnerCheck(*l)
		return "liveness unknown: " + note
	case store.Unleased:
		if r.Status == store.StatusPaused {
			return store.StatePaused.String()
		}
		return "no driver"
	}
	return "liveness unknown"
}

// storeLabel is the store's path, the home directory written as ~.
func (m *Model) storeLabel() string {
	if m.opt.StoreLabel != "" {
		return m.opt.StoreLabel
	}
	p := m.src.Path()
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home+"/") {
		p = "~" + p[len(home):]
	}
	return p
}

func shortPath(p string, n int) string {
	if len(p) <= n {
		return p
	}
	return "…" + p[len(p)-n+1:]
}

// RenderPane draws one pane (0–5, in the order of keymap.PaneNames) at w×h,
// focused, as it would appear on screen: screenshots and docs use it. The
// pane is sized for the drawing; the panes on screen get their places back.
func (m *Model) RenderPane(i, w, h int) string {
	p := m.panes[i]
	p.SetSize(w, h)
	defer m.relayout()
	return sanitize.Frame(p.View(true))
}

// storesPart says how many stores are open and which cannot be read now,
// and why: an offline store's rows are as last read, which is what is
// wrong (priority 1) while the others stay current.
func (m *Model) storesPart(set store.StoreSet, add func(int, string)) {
	t := m.env.Theme
	sts := set.Stores()
	var off []string
	for _, st := range sts {
		if st.Offline != "" {
			off = append(off, st.Prefix+" offline: "+sanitize.Line(st.Offline))
		}
	}
	label := fmt.Sprintf("%d stores", len(sts))
	if len(off) == 0 {
		add(3, t.Muted.Render(label))
		return
	}
	add(1, t.Bad.Render("✕ "+label+", "+strings.Join(off, "; ")))
}
