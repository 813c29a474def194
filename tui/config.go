package tui

import (
	"image/color"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/views"
)

// Look is what the user's config says about the explorer's look and keys.
type Look struct {
	// Mode is "dark" or "light" to fix the background the colours are for;
	// "" or "auto" asks the terminal.
	Mode    string
	Palette map[string]color.Color // colours replacing the palette's, by role name
	Keys    *keymap.KeyMap         // nil: the default keys
}

// fixedBackground reports whether the config fixes the background, and to what.
func (m *Model) fixedBackground() (dark, fixed bool) {
	switch m.opt.Look.Mode {
	case "dark":
		return true, true
	case "light":
		return false, true
	}
	return false, false
}

// theme builds the theme for the background as known now.
func (m *Model) theme() *views.Theme {
	return views.NewThemeFor(m.dark, m.opt.NoColor, m.opt.Look.Palette, m.opt.Colors)
}

// keys are the bindings: the config's remap, else the defaults.
func (m *Model) keys() keymap.KeyMap {
	if m.opt.Look.Keys != nil {
		return *m.opt.Look.Keys
	}
	return keymap.Default()
}
