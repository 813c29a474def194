package tui

import (
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// readingNoter is a SQLite source that can say, in a few words, what its
// browsing connection reads the store without: a WAL with no -shm beside
// it (its commits not shown), a rollback journal a reader cannot roll
// back. The command line warns of it with the whole line (Problems); the
// explorer keeps the short form on its status bar while it holds, as what
// is shown is then not all there is. (A Leviath run not read whole is a
// row of its own in the runs list.)
type readingNoter interface{ ReadingNote() string }

// problems is that note, as of the last read.
type problems struct{ note string }

// problemsOf asks src, off the UI's goroutine.
func problemsOf(src store.Source) problems {
	if rn, ok := src.(readingNoter); ok {
		return problems{note: rn.ReadingNote()}
	}
	return problems{}
}

// barText is the status bar's part for them ("" when none).
func (p problems) barText() string {
	if p.note == "" {
		return ""
	}
	return "⚠ " + sanitize.Line(p.note)
}
