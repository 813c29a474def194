package views

import (
	"image/color"

	"github.com/charmbracelet/colorprofile"
)

// NewThemeOver is NewTheme with some of the palette's colours replaced, by
// role name (the user's config: text, muted, faint, border, accent,
// select_bg, select_blur_bg, running, waiting, paused, stale, good, bad,
// estimate, reported). Without colour there is nothing to replace.
func NewThemeOver(dark, noColor bool, over map[string]color.Color) *Theme {
	if noColor || len(over) == 0 {
		return NewTheme(dark, noColor)
	}
	return themeOf(paletteOver(dark, over), dark)
}

// NewThemeFor is NewThemeOver for a terminal of profile's colours, for a
// program that writes its frames itself (vigil serve's sessions): every
// colour is the terminal's own, as Bubble Tea's renderer would bring it
// down; a terminal without colours gets the theme without colour. Unknown
// and TrueColor: NewThemeOver.
func NewThemeFor(dark, noColor bool, over map[string]color.Color, profile colorprofile.Profile) *Theme {
	return sharedTheme(dark, noColor, over, profile)
}

func newThemeFor(dark, noColor bool, over map[string]color.Color, profile colorprofile.Profile) *Theme {
	switch {
	case noColor || profile == colorprofile.Unknown || profile == colorprofile.TrueColor:
		return NewThemeOver(dark, noColor, over)
	case profile <= colorprofile.ASCII:
		return NewTheme(dark, true)
	}
	p := paletteOver(dark, over)
	for _, c := range []*color.Color{&p.Text, &p.Muted, &p.Faint, &p.Border, &p.Accent, &p.SelectBg, &p.SelectBlurBg,
		&p.Running, &p.Waiting, &p.Paused, &p.Stale, &p.Good, &p.Bad, &p.Estimate, &p.Reported, &p.MatchText} {
		*c = profile.Convert(*c)
	}
	return themeOf(p, dark)
}

// paletteOver is the palette with the roles in over replaced.
func paletteOver(dark bool, over map[string]color.Color) Palette {
	p := palette(dark)
	roles := map[string]*color.Color{
		"text": &p.Text, "muted": &p.Muted, "faint": &p.Faint, "border": &p.Border, "accent": &p.Accent,
		"select_bg": &p.SelectBg, "select_blur_bg": &p.SelectBlurBg, "running": &p.Running, "waiting": &p.Waiting,
		"paused": &p.Paused, "stale": &p.Stale, "good": &p.Good, "bad": &p.Bad, "estimate": &p.Estimate, "reported": &p.Reported,
	}
	for name, c := range over {
		if dst, ok := roles[name]; ok && c != nil {
			*dst = c
		}
	}
	return p
}
