package tui

import "time"

// Refresh reads the store's changes now, as a watcher's signal would, and
// runs what follows until things settle (a model driven headless, with
// NoWatch: the tests of other packages). It reports whether the model quit.
func (m *Model) Refresh(wait time.Duration) bool { return m.RunCmd(m.askRefresh(), wait) }
