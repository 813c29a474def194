package cli

import (
	"strings"
	"sync"
)

// exportHealth is how the demo's live export goes, for the explorer's
// status bar: the explorer owns the terminal, so the export's log lines
// wait until it quits, and a failing export must not look like a quiet one.
type exportHealth struct {
	mu  sync.Mutex
	err error // the last batch's failure; nil once one is taken
}

func (h *exportHealth) set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

// problem is the status bar's words while the export fails, else "".
func (h *exportHealth) problem() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		return ""
	}
	// The innermost cause ("connection refused") fits a status bar; the
	// whole lines are written when the explorer quits.
	msg := h.err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return "OTLP export failing, retrying: " + msg
}
