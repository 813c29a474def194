package views

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
)

// A paste longer than a field takes fills it, and the field's line says it
// is full, within the pane's width.
func TestAFullFieldSaysSo(t *testing.T) {
	now := time.Now()
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	p := NewRuns(env)
	p.SetSize(80, 12)
	p.Key(tea.KeyPressMsg{Code: '/', Text: "/"})
	p.Paste(strings.Repeat("a", 3000))
	if v := p.View(true); strings.Contains(v, "characters at most") {
		t.Fatalf("a field of 3,000 characters says it is full:\n%s", v)
	}
	p.Paste(strings.Repeat("b", 3000))
	v := p.View(true)
	if !strings.Contains(v, "full: 4,096 characters at most") {
		t.Fatalf("a field cut at 4,096 characters does not say so:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w != 80 {
			t.Errorf("a line %d wide in a pane 80 wide: %q", w, l)
		}
	}
	if got := len(p.Filter()); got != 4096 {
		t.Errorf("the filter holds %d characters", got)
	}
}
