package views

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
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

// feed passes a key or a paste to an input, dropping any command it
// returns (a non-blinking input asks for none that matter). The input
// cleans both alike: control characters (an escape sequence's ESC and
// BEL) are dropped, tabs and line breaks become spaces.
func feed(in *textinput.Model, msg tea.Msg) {
	*in, _ = in.Update(msg)
}
