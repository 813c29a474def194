package keymap

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func TestDefaultHasNoConflicts(t *testing.T) {
	k := Default()
	if err := k.conflicts(nil); err != nil {
		t.Fatal(err)
	}
}

// Every key the help overlay lists can be remapped by a name.
func TestEveryHelpKeyHasAnAction(t *testing.T) {
	k := Default()
	for _, g := range k.Groups() {
		for _, b := range g.Bindings {
			if k.actionOf(b) == "" {
				t.Errorf("%s: %q (%s) has no action name", g.Title, b.Help().Key, b.Help().Desc)
			}
		}
	}
}

func TestRemapRebindsAndRelabels(t *testing.T) {
	k := Default()
	if err := k.Remap(map[string][]string{"approve": {"Y"}, "next_waiting": {"ctrl+w", "W"}}); err != nil {
		t.Fatal(err)
	}
	if !key.Matches(tea.KeyPressMsg{Code: 'Y', Text: "Y"}, k.Approve) || key.Matches(tea.KeyPressMsg{Code: 'a', Text: "a"}, k.Approve) {
		t.Fatal("approve is not on Y alone")
	}
	if h := k.NextWaiting.Help(); h.Key != "ctrl+w/W" || !strings.Contains(h.Desc, "oldest waiting") {
		t.Fatalf("help = %+v", h)
	}
	if !strings.Contains(k.MarkdownTable(), "| `Y` | approve | Approvals | `approve` |") {
		t.Fatalf("the key table does not show the remap:\n%s", k.MarkdownTable())
	}
}

func TestRemapErrors(t *testing.T) {
	for _, c := range []struct {
		m    map[string][]string
		want string
	}{
		{map[string][]string{"approve": {"j"}}, `keys: "j" is bound to both approve and down`},
		{map[string][]string{"quit": {"1"}}, `keys: "1" is bound to both quit and pane_1`},
		{map[string][]string{"confirm": {"n"}}, `keys: "n" is bound to both confirm and cancel`},
		{map[string][]string{"confirm": {"esc"}}, `keys: "esc" is bound to both confirm and back`},
		{map[string][]string{"frobnicate": {"x"}}, "keys.frobnicate: no such action (one of: answer, approve"},
		{map[string][]string{"deny": {}}, "keys.deny: no key given"},
		{map[string][]string{"deny": {" "}}, `keys.deny: " " is not a key name`},
	} {
		k := Default()
		err := k.Remap(c.m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.m, err, c.want)
		}
		if k.Approve.Help().Key != "a" {
			t.Errorf("%v: a failed remap changed the keymap", c.m)
		}
	}
	// Keys shared by design stay allowed: confirm on a letter the queue uses.
	k := Default()
	if err := k.Remap(map[string][]string{"confirm": {"a"}}); err != nil {
		t.Fatal(err)
	}
}

// A config from before A meant approve-always (approve = "A", docs/config.md's
// example) keeps working: approve takes A, approve-always gives it up.
func TestOlderConfigTakesANewerDefaultsKey(t *testing.T) {
	k := Default()
	if err := k.Remap(map[string][]string{"approve": {"A"}}); err != nil {
		t.Fatal(err)
	}
	if !key.Matches(tea.KeyPressMsg{Code: 'A', Text: "A"}, k.Approve) || key.Matches(tea.KeyPressMsg{Code: 'A', Text: "A"}, k.ApproveAlways) {
		t.Fatal("A is not approve's alone")
	}
	if k.ApproveAlways.Enabled() {
		t.Error("approve-always kept a key")
	}
	if err := k.Remap(map[string][]string{"approve_always": {"Z"}}); err != nil || !key.Matches(tea.KeyPressMsg{Code: 'Z', Text: "Z"}, k.ApproveAlways) {
		t.Errorf("approve-always on Z: %v", err)
	}
}
