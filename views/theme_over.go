package views

import "image/color"

// NewThemeOver is NewTheme with some of the palette's colours replaced, by
// role name (the user's config: text, muted, faint, border, accent,
// select_bg, select_blur_bg, running, waiting, paused, stale, good, bad,
// estimate, reported). Without colour there is nothing to replace.
func NewThemeOver(dark, noColor bool, over map[string]color.Color) *Theme {
	if noColor || len(over) == 0 {
		return NewTheme(dark, noColor)
	}
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
	return themeOf(p, dark)
}
