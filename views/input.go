package views

import (
	"unicode/utf8"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/textfmt"
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

// inputView is in drawn, with a note at its end once it is full: what is
// typed or pasted past its CharLimit is dropped, and the person is told so
// rather than left to find a paste cut short.
func inputView(in textinput.Model, t *Theme) string {
	v := in.View()
	if in.CharLimit <= 0 || utf8.RuneCountInString(in.Value()) < in.CharLimit {
		return v
	}
	note := " full: " + textfmt.Thousands(int64(in.CharLimit)) + " characters at most"
	w := ansi.StringWidth(v)
	return ansi.Truncate(v, max(w-ansi.StringWidth(note), 0), "") + t.Warning.Render(note)
}
