package views

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

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
