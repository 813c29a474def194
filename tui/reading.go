package tui

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
)

// Until the first read of a store completes no pane has anything true to
// say: "no runs" or "nothing waits on a human" would be a guess. Each pane
// says it is reading instead, and once the read takes longer than a moment,
// which part of it is under way and for how long.

// readProgress is the part of the first read under way, set by the command
// that reads (loadAll) and read by the frame.
type readProgress struct {
	stage atomic.Pointer[string]
	since time.Time // on the model's clock
}

func newReadProgress(now time.Time) *readProgress {
	p := &readProgress{since: now}
	p.set("opening it")
	return p
}

// set names the part of the read under way (p may be nil: nobody draws it).
func (p *readProgress) set(stage string) {
	if p != nil {
		p.stage.Store(&stage)
	}
}

func (p *readProgress) now() string {
	if s := p.stage.Load(); s != nil {
		return *s
	}
	return ""
}

// readingMoment is how long a read goes without saying how far it got.
const readingMoment = time.Second

// paneTitles are the panes' titles as they draw them.
var paneTitles = [paneCount]string{
	paneRuns: "1 Runs", paneAgents: "2 Agents", paneTimeline: "3 Timeline",
	paneStep: "4 Step", paneDrift: "5 Drift", paneApprovals: "6 Approvals",
}

// reading reports whether the panes wait on the first read.
func (m *Model) reading() bool { return !m.loaded && m.src.reading != nil }

// readingLines is what every pane says while the first read is under way.
func (m *Model) readingLines() []string {
	t := m.env.Theme
	lines := []string{"  " + t.Muted.Render("reading the store…")}
	if m.stale != "" {
		// The read failed and is tried again: say why, not that it reads.
		return []string{"  " + t.Muted.Render("not read yet: the store could not be read"),
			"  " + t.Bad.Render(sanitize.Line(m.stale))}
	}
	if took := m.now().Sub(m.src.reading.since); took >= readingMoment {
		stage := m.src.reading.now()
		// Two short lines: they fit the narrowest pane.
		lines = append(lines, "  "+t.Muted.Render(stage), "  "+t.Muted.Render(fmt.Sprintf("for %s so far", textfmt.Duration(took))))
	}
	return lines
}

// readingPane draws pane p as reading.
func (m *Model) readingPane(p pane) []string {
	r := m.rects[p]
	return strings.Split(m.env.Theme.Frame(paneTitles[p], "", m.readingLines(), r.w, r.h, p == m.focus), "\n")
}
