package cli

import (
	"strings"
	"testing"
)

// Issue 29 (smaller): an argument to a command that takes none, a number
// flag given a word, and a pace the demo cannot keep each get one usage line
// in plain words (exit 2), never strconv's text or a silent 1.
func TestUsageInPlainWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"runs", "extra"}, `vigil: runs takes no arguments, got "extra"`},
		{[]string{"demo", "--seed", "abc"}, `vigil: --seed wants a whole number, got "abc"`},
		{[]string{"demo", "--speed", "0"}, "vigil: --speed 0: the pace must be more than 0"},
		{[]string{"demo", "--speed", "-1"}, "vigil: --speed -1: the pace must be more than 0"},
		{[]string{"demo", "--speed", "fast"}, `vigil: --speed wants a number, got "fast"`},
	} {
		r := h.run(c.args...)
		r.wantCode(t, 2)
		r.oneLine(t, c.says, "(see 'vigil")
		for _, bad := range []string{"strconv", "unknown command"} {
			if strings.Contains(r.stderr, bad) {
				t.Fatalf("%v: %q says %q", c.args, r.stderr, bad)
			}
		}
	}
}

// Issue 29 (smaller): a broken config file is refused by runs --store X as
// by runs, exit 2, one line (docs/config.md: every command refuses it).
func TestNamedStoreRefusesABrokenConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := writeConfig(t, h, "[keys]\napprove = \"q\"\n")
	want := "vigil: config " + p + `: keys: "q" is bound to both approve and quit` + "\n"
	for _, args := range [][]string{{"runs"}, {"runs", "--store", fixtureStore(t)}} {
		r := h.run(args...)
		r.wantCode(t, 2)
		if r.stderr != want {
			t.Fatalf("%v: stderr %q, want %q", args, r.stderr, want)
		}
	}
}
