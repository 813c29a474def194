package tui

import (
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// problems is what the source's browsing connection reads the store
// without, in a few words (store.ReadingNoter: a WAL with no -shm beside
// it, its commits not shown; a rollback journal a reader cannot roll
// back), as of the last read. The command line warns of it with the whole
// line (Problems); the explorer keeps the short form on its status bar
// while it holds, as what is shown is then not all there is. (A Leviath
// run not read whole is a row of its own in the runs list.)
type problems struct{ note string }

// problemsOf asks src, off the UI's goroutine.
func problemsOf(src store.Source) problems { return problems{note: src.ReadingNote()} }

// barText is the status bar's part for them ("" when none).
func (p problems) barText() string {
	if p.note == "" {
		return ""
	}
	return "⚠ " + sanitize.Line(p.note)
}
