package views

import (
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
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

// TestThemeForProfile: a theme for a terminal of 16 or 256 colours writes
// only colours that terminal has (what Bubble Tea's renderer would have
// brought them down to), and one without colours is the colourless theme.
func TestThemeForProfile(t *testing.T) {
	for _, c := range []struct {
		profile   colorprofile.Profile
		want, not string
	}{
		{colorprofile.ANSI, "\x1b[", "8;5;"},
		{colorprofile.ANSI256, "38;5;", "38;2;"},
		{colorprofile.TrueColor, "38;2;", "38;5;"},
	} {
		th := NewThemeFor(true, false, nil, c.profile)
		for _, st := range []Style{th.Text, th.Selected, th.Match, th.Border} {
			out := st.Render("x")
			if !strings.Contains(out, c.want) || strings.Contains(out, c.not) || strings.Contains(out, "8;2;") && c.profile != colorprofile.TrueColor {
				t.Errorf("%v: %q has not %q or has %q", c.profile, out, c.want, c.not)
			}
		}
	}
	if th := NewThemeFor(true, false, nil, colorprofile.ASCII); !th.NoColor {
		t.Error("a terminal without colours got a colour theme")
	}
}
