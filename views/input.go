package views

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
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

// newInput is a one-line text input that does not blink, so a frame depends
// only on the model (golden tests and screenshots stay stable).
func newInput(prompt, placeholder string) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	in.Placeholder = placeholder
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	in.CharLimit = 4096
	return in
}

// feed passes a key to an input, dropping any command it returns (a
// non-blinking input asks for none that matter).
func feed(in *textinput.Model, msg tea.KeyPressMsg) {
	*in, _ = in.Update(msg)
}
