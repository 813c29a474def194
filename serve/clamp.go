package serve

import "fmt"

// A terminal's size is the client's to say, and a screen is drawn in
// memory cell by cell: a pty of thousands of rows and columns asked for
// more memory than the server has. Sessions are drawn at most maxCols×maxRows, more
// than a terminal shows on any screen at a readable font, in the top left
// of a larger terminal, which says so.
const (
	maxCols = 500
	maxRows = 200
)

var clampNote = fmt.Sprintf("drawn at %d×%d at most", maxCols, maxRows)

// clampSize is a terminal's size as a session is drawn at, and whether it
// was cut down.
func clampSize(w, h int) (int, int, bool) {
	cw, ch := min(max(w, 0), maxCols), min(max(h, 0), maxRows)
	return cw, ch, cw != w || ch != h
}

func whoClamped(who string, clamped bool) string {
	if clamped {
		return who + " · " + clampNote
	}
	return who
}
