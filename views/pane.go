package views

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// Env is what every pane shares with the root model: the theme it draws
// with, the keys it answers to (and names in its hints), and the clock.
// The root owns it. Panes read the theme only as they draw, so the root
// may swap it (a light terminal answers after the first frame) without
// telling them.
type Env struct {
	Theme *Theme
	Keys  keymap.KeyMap
	Now   func() time.Time
}

// Pane is the protocol between the root model and each of its panes. The
// root sizes every pane it shows when the screen or the layout changes,
// sends keys to the focused pane, clicks and the wheel to the pane under
// the pointer, and turns the intents they return into commands. A pane
// never does IO and never sees another pane.
type Pane interface {
	// SetSize gives the pane its rectangle, borders included. Everything
	// that follows from the size (list heights, wrapped lines, column
	// widths) is worked out here, so keys and clicks act on the geometry
	// of the next frame whether or not it has been drawn.
	SetSize(w, h int)
	// Focus tells the pane it has just gained the focus.
	Focus()
	// Capturing reports whether the pane takes every key now (a text field
	// or a confirmation is open), before the root's own keys.
	Capturing() bool
	// Key handles a key pressed while the pane has the focus.
	Key(msg tea.KeyPressMsg) Intent
	// Paste puts a bracketed paste into the text field being typed, if
	// one is; else it does nothing (a paste is never a key).
	Paste(text string) Intent
	// Click handles a left click at (x, y), counted from the pane's
	// top-left border cell.
	Click(x, y int) Intent
	// Wheel scrolls by d rows (negative: up).
	Wheel(d int) Intent
	// View draws the pane at the size it was given.
	View(focused bool) string
	// Rev is the pane's revision: it moves whenever what View draws may
	// have changed, besides the focus, the theme and the clock, so a
	// drawing may be kept until it moves (revision.go).
	Rev() uint64
	// Clock is what View reads of the clock at now: frames at two clocks
	// with the same Clock draw alike, but for an age up to its grain (a
	// second) late. A pane that does not read the clock says 0.
	Clock(now time.Time) int64
}

// Every pane speaks the protocol.
var (
	_ Pane = (*Runs)(nil)
	_ Pane = (*Tree)(nil)
	_ Pane = (*Timeline)(nil)
	_ Pane = (*Detail)(nil)
	_ Pane = (*Drift)(nil)
	_ Pane = (*Approvals)(nil)
)

// Intent is what a pane asks the root model to do after a key or a click.
// Panes never do IO themselves: the root turns intents into commands.
type Intent struct {
	Kind     IntentKind
	ID       string         // run id (OpenRun, SelectAgent)
	RowID    int64          // step row (SelectStep)
	Decision store.Decision // Decide
}

// IntentKind says what an intent asks for.
type IntentKind int

const (
	NoIntent    IntentKind = iota
	OpenRun                // show this run's tree and timeline
	SelectAgent            // show this agent's timeline and drift
	SelectStep             // load this step's detail
	Decide                 // write a decision
	Redraw                 // only the view changed
)

// redraw is the intent of a key or a click that changed only the view.
var redraw = Intent{Kind: Redraw}
