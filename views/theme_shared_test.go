package views

import (
	"image/color"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// Sessions asking for the same look get the same theme (what is kept by
// theme is then shared); any difference in the look, down to an indexed
// colour that is as black as another, gets a theme of its own, drawn in
// its own colours.
func TestNewThemeForSharesOneThemeALook(t *testing.T) {
	over := map[string]color.Color{"accent": ansi.IndexedColor(16)}
	a := NewThemeFor(true, false, over, colorprofile.ANSI256)
	if b := NewThemeFor(true, false, map[string]color.Color{"accent": ansi.IndexedColor(16)}, colorprofile.ANSI256); a != b {
		t.Error("the same look gave two themes")
	}
	for name, other := range map[string]*Theme{
		"light":         NewThemeFor(false, false, over, colorprofile.ANSI256),
		"no colour":     NewThemeFor(true, true, over, colorprofile.ANSI256),
		"16 colours":    NewThemeFor(true, false, over, colorprofile.ANSI),
		"indexed 0":     NewThemeFor(true, false, map[string]color.Color{"accent": ansi.IndexedColor(0)}, colorprofile.ANSI256),
		"other role":    NewThemeFor(true, false, map[string]color.Color{"text": ansi.IndexedColor(16)}, colorprofile.ANSI256),
		"no overriding": NewThemeFor(true, false, nil, colorprofile.ANSI256),
	} {
		if other == a {
			t.Errorf("%s: the same theme as another look", name)
		}
	}
	fresh := newThemeFor(true, false, map[string]color.Color{"accent": ansi.IndexedColor(0)}, colorprofile.ANSI256)
	shared := NewThemeFor(true, false, map[string]color.Color{"accent": ansi.IndexedColor(0)}, colorprofile.ANSI256)
	if got, want := shared.BorderFocus.Render("x"), fresh.BorderFocus.Render("x"); got != want {
		t.Errorf("the shared theme draws a focused border (accent) as %q, a theme made for the look as %q", got, want)
	}
}
