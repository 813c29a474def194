package views

import (
	"reflect"
	"testing"
)

// TestStyleMatchesLipgloss: every style of every theme renders exactly what
// lipgloss renders, short cut or not, and the short cut is taken for the
// styles a frame draws most.
func TestStyleMatchesLipgloss(t *testing.T) {
	inputs := []string{"", "plain", "two words", " lead and trail ", "wide 字 and é\u0301", "│ box ─ ●",
		"\x1b[1mstyled\x1b[m already", "two\nlines", "a\ttab", "cr\r\nlf", "trailing\n"}
	themes := map[string]*Theme{"dark": NewTheme(true, false), "light": NewTheme(false, false),
		"nocolor": NewTheme(true, true), "plain": PlainTheme()}
	for name, th := range themes {
		v := reflect.ValueOf(th).Elem()
		for i := 0; i < v.NumField(); i++ {
			st, ok := v.Field(i).Interface().(Style)
			if !ok {
				continue
			}
			field := v.Type().Field(i).Name
			for _, in := range inputs {
				if got, want := st.Render(in), st.Style.Render(in); got != want {
					t.Errorf("%s.%s.Render(%q) = %q, lipgloss gives %q", name, field, in, got, want)
				}
			}
		}
		for _, st := range []Style{th.Text, th.Muted, th.Border, th.Selected, th.Bold} {
			if !st.fast {
				t.Errorf("%s: a text style takes lipgloss's long way: %+v", name, st)
			}
		}
	}
	// Underlined spaces are lipgloss's own: never short cut.
	if NewTheme(true, true).SelectedBlur.fast {
		t.Error("an underlined style was short cut")
	}
}
