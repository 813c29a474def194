package serve

import (
	"io"
	"time"
)

// frameTap, when set, is told of every write a session's own screen has
// finished (draw's bytes, once the SSH channel took them) and of the
// screen's end, by screen. Only a build with -tags vigiltrace sets it
// (tap_trace.go): the load bench times a commit to the frame's last byte on
// the server's socket as well as to the client's screen, so that what the
// server does is told from how soon fifty client emulators on the same
// cores read it.
var frameTap interface {
	wrote(screen any, at time.Time, b string)
	ended(screen any)
}

// libraryRenderer draws each session's own explorer with Bubble Tea's
// renderer instead of lineScreen. Only a vigiltrace build sets it
// ($VIGIL_SERVE_RENDERER=bubbletea): the load bench measures the library
// beside lineScreen (docs/performance.md, "Faster copies of libraries").
var libraryRenderer bool

// tappedWriter is a session's output as Bubble Tea's renderer writes it,
// each write told to frameTap.
type tappedWriter struct{ w io.Writer }

func (t *tappedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if frameTap != nil {
		frameTap.wrote(t, time.Now(), string(p))
	}
	return n, err
}
