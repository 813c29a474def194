package tui

import (
	"image/color"
	"regexp"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/keymap"
)

// Remapped keys act, and the help overlay and the footer name them.
func TestRemappedKeysActAndShow(t *testing.T) {
	k := keymap.Default()
	if err := k.Remap(map[string][]string{"approve": {"Y"}, "help": {"f1"}}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, 200, 60, func(o *Options) { o.Look.Keys = &k })
	d.send(tea.KeyPressMsg{Code: tea.KeyF1})
	d.contains("Help · keys")
	if !regexp.MustCompile(`\bY +approve`).MatchString(d.screen()) || !regexp.MustCompile(`\bf1 +help`).MatchString(d.screen()) {
		t.Fatalf("the help overlay does not show the remapped keys:\n%s", d.screen())
	}
	d.send(tea.KeyPressMsg{Code: tea.KeyF1})
	onRequest(t, d, approval2)
	d.contains("Y approve")
	d.press("a")
	if d.m.approvals.Capturing() {
		t.Fatal("a still approves after approve was moved to Y")
	}
	d.advance(time.Second)
	d.press("Y")
	d.contains("Approve write CHANGELOG.md?")
}

// theme.mode fixes the background: the terminal's answer does not change it.
func TestFixedThemeMode(t *testing.T) {
	d := newDriver(t, 120, 40, func(o *Options) {
		o.Look.Mode = "light"
		o.Look.Palette = map[string]color.Color{"accent": color.RGBA{0xff, 0x88, 0, 0xff}}
		o.NoColor = false
	})
	if d.m.env.Theme.Dark {
		t.Fatal("light mode drew for a dark background")
	}
	d.send(tea.BackgroundColorMsg{Color: color.Black})
	if d.m.env.Theme.Dark {
		t.Fatal("the terminal's dark background overrode theme.mode = light")
	}
}
