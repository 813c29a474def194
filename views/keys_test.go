package views

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// Panes know keys only as bindings: rebind them and the panes answer to
// the new keys, and every hint on screen names them.
func TestPanesFollowTheBindings(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	km := keymap.Default()
	km.Approve = key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "approve"))
	km.Dismiss = key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "discard"))
	km.Submit = key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "done"))
	km.Filter = key.NewBinding(key.WithKeys("|"), key.WithHelp("|", "filter"))
	km.Back = key.NewBinding(key.WithKeys("ctrl+b"), key.WithHelp("ctrl+b", "back"))
	env := &Env{Theme: PlainTheme(), Keys: km, Now: func() time.Time { return now }}
	press := func(p Pane, keys ...tea.KeyPressMsg) {
		for _, k := range keys {
			p.Key(k)
		}
	}
	text := func(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }

	ap := NewApprovals(env)
	ap.SetSize(90, 20)
	ap.SetItems([]ApprovalItem{{Req: store.Request{Kind: store.Approval, ID: "1", Act: "write", Target: "a.txt"}, Delivery: store.Deliverable}}, now)
	now = now.Add(time.Second)
	if v := ansi.Strip(ap.View(true)); !strings.Contains(v, "x approve") {
		t.Errorf("the queue's footer does not offer the rebound approve key:\n%s", v)
	}
	press(ap, text("a"))
	if ap.Capturing() {
		t.Error("a still approves after approve was rebound to x")
	}
	press(ap, text("x"))
	if !ap.Capturing() {
		t.Error("x, the rebound approve key, did not ask for confirmation")
	}

	runs := NewRuns(env)
	runs.SetSize(90, 10)
	runs.SetItems([]RunItem{{Run: store.Run{ID: "1", Goal: "alpha"}}, {Run: store.Run{ID: "2", Goal: "beta"}}})
	press(runs, text("|"), text("b"), tea.KeyPressMsg{Code: tea.KeyTab})
	if runs.Capturing() || runs.Filter() != "b" {
		t.Fatalf("the rebound filter and done keys: capturing %v, filter %q", runs.Capturing(), runs.Filter())
	}
	if v := ansi.Strip(runs.View(true)); !strings.Contains(v, "(ctrl+b clears)") {
		t.Errorf("the kept filter does not name the rebound back key:\n%s", v)
	}
	press(runs, text("|"), tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	if runs.Capturing() || runs.Filter() != "" {
		t.Errorf("the rebound discard key: capturing %v, filter %q", runs.Capturing(), runs.Filter())
	}

	help := NewHelp(env)
	help.SetSize(120, 60) // tall enough for the whole help, its closing line too
	if v := ansi.Strip(help.View()); !regexp.MustCompile(` x +approve `).MatchString(v) || !strings.Contains(v, "or ctrl+b to close") {
		t.Errorf("the help does not list the rebound keys:\n%s", v)
	}
}
