package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
)

// Issue 29 (smaller): a read-only queue with nothing waiting says
// "read-only" in its title, not "· read-only" after nothing.
func TestReadOnlyTitleWithNothingWaiting(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	p := NewApprovals(env)
	p.SetReadOnly("browsing only")
	p.SetSize(60, 8)
	top := strings.Split(ansi.Strip(p.View(true)), "\n")[0]
	if strings.Contains(top, "· read-only") || !strings.Contains(top, " read-only ") {
		t.Fatalf("the title reads %q", top)
	}
}
