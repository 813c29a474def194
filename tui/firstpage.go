package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
)

// firstPageState is the start-up of a big store: the first frame is drawn
// from the newest runs (store.RecentRunner), the rest is read after it.
// Until the rest arrives no refresh runs (the rest replaces the page and
// would drop what was folded into it; the cursor taken before both reads
// brings it all again), and the counts that arrive are kept to be applied
// to the rest too.
type firstPageState struct {
	partial   bool
	openLater bool                      // the run to open first may be older than the page
	stats     map[string]store.RunStats // counts that came while partial
	asked     map[string]bool           // runs counted from the page (on their way, or in stats)
}

func (f *firstPageState) keepStats(st map[string]store.RunStats) {
	if !f.partial {
		return
	}
	if f.stats == nil {
		f.stats = map[string]store.RunStats{}
	}
	for id, s := range st {
		f.stats[id] = s
	}
}

// onRest takes every run in place of the page, then reads the changes
// since the first load and counts the runs the page did not hold.
func (m *Model) onRest(msg restMsg) tea.Cmd {
	if !m.first.partial {
		return nil
	}
	if msg.err != nil {
		m.markStale(staleRead, "cannot read the store: "+msg.err.Error())
		return m.retryLater() // retryMsg reads the rest again
	}
	if m.staleCause == staleRead {
		m.clearStale(staleRead)
		m.tries = 0
	}
	if msg.cursor != nil {
		m.cursor = msg.cursor // no refresh ran while the page was shown
	}
	stats, asked, openLater := m.first.stats, m.first.asked, m.first.openLater
	m.first = firstPageState{}
	m.runs.SetReading(false)
	m.st.model.SetRuns(msg.runs)
	if len(stats) > 0 {
		m.st.model.ApplyStats(stats)
	}
	m.refreshItems()
	cmds := []tea.Cmd{m.askRefresh()}
	var unknown []string
	for _, id := range m.st.model.Unknown() {
		if !asked[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		cmds = append(cmds, loadStats(m.src, unknown))
	}
	if openLater {
		if first, _ := m.firstRun(); first != "" {
			cmds = append(cmds, m.openRun(first))
		}
	}
	return tea.Batch(cmds...)
}
