package tui

import (
	"fmt"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// problems is what a source says it reads without (store.ProblemReporter):
// a WAL with no -shm beside it (its commits not shown), a rollback journal
// a reader cannot roll back, a Leviath run that cannot be read whole. The
// command line says these once as warnings; the explorer keeps the first
// on the status bar while it holds, as what is shown is not all there is.
type problems struct {
	first string // "" when none
	more  int    // how many besides the first
}

// problemsOf asks src, off the UI's goroutine (a Leviath source settles
// its runs to answer).
func problemsOf(src store.Source) problems {
	pr, ok := src.(store.ProblemReporter)
	if !ok {
		return problems{}
	}
	errs := pr.Problems()
	if len(errs) == 0 {
		return problems{}
	}
	return problems{first: errs[0].Error(), more: len(errs) - 1}
}

// barText is the status bar's part for them ("" when none).
func (p problems) barText() string {
	if p.first == "" {
		return ""
	}
	s := "⚠ " + sanitize.Line(p.first)
	if p.more > 0 {
		s += fmt.Sprintf(" (and %d more)", p.more)
	}
	return s
}
