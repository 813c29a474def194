package keymap

import (
	"flag"
	"os"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

var update = flag.Bool("update", false, "rewrite the README's key table")

const (
	begin = "<!-- keys:begin (generated from keymap/; go test ./keymap -update) -->\n"
	end   = "<!-- keys:end -->"
)

// The README's key table is the keymap's, so the two cannot drift apart.
func TestREADMEKeyTable(t *testing.T) {
	path := "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no generated key table (markers %q … %q)", begin, end)
	}
	want := Default().MarkdownTable()
	if got := readme[i+len(begin) : j]; got != want {
		if *update {
			os.WriteFile(path, []byte(readme[:i+len(begin)]+want+readme[j:]), 0o644)
			return
		}
		t.Errorf("README.md's key table is out of date; run go test ./keymap -update.\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// No key does two things where both could act: within the keys a pane
// answers to, every key is bound once.
func TestNoKeyBoundTwice(t *testing.T) {
	k := Default()
	seen := map[string]string{}
	for _, g := range k.Groups() {
		if g.Title == "Approvals" {
			continue // a/d/e/r/y/n act only in the approval queue, where Move and Panes keys mean the same
		}
		for _, b := range g.Bindings {
			for _, key := range b.Keys() {
				if prev, ok := seen[key]; ok {
					t.Errorf("%q is bound to both %q and %q", key, prev, b.Help().Desc)
				}
				seen[key] = b.Help().Desc
			}
		}
	}
	if !key.Matches(tea.KeyPressMsg{Code: '?', Text: "?"}, k.Help) || !key.Matches(tea.KeyPressMsg{Code: tea.KeyTab}, k.NextPane) {
		t.Error("? and tab do not match their bindings")
	}
}
