package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The README's screenshots show what the code draws now: each PNG carries
// the SHA-256 of the frame it was made from, and the frames are drawn again
// here from the demo at its fixed seed. A change to what the explorer draws
// fails this until `go run ./screenshots/gen` is run again.
func TestScreenshotsAreCurrent(t *testing.T) {
	frames, err := drawFrames(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, f := range frames {
		got, err := readStamp(filepath.Join("..", f.name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if got != f.sum() {
			stale = append(stale, f.name+".png")
		}
	}
	if len(stale) > 0 {
		t.Fatalf("screenshots drawn from other frames than the code draws now: %s; run `go run ./screenshots/gen`",
			strings.Join(stale, ", "))
	}
}

// The frames show the demo as vigil demo shows it: its store's label, a
// fresh write, the decided list's ⇄ in the help.
func TestScreenshotsShowTheDemo(t *testing.T) {
	frames, err := drawFrames(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, f := range frames {
		byName[f.name] = ansi.Strip(f.text)
	}
	for _, name := range []string{"overview-120x32", "overview-200x60"} {
		s := byName[name]
		if !strings.Contains(s, "demo (temporary store)") || !strings.Contains(s, "updated 2s ago") {
			t.Errorf("%s does not show the demo's store as vigil demo does:\n%s", name, s)
		}
	}
	if !strings.Contains(byName["help"], "waiting ⇄ decided") {
		t.Errorf("the help frame lacks ⇄:\n%s", byName["help"])
	}
}

// Two draws in one process give the same frames: the test above compares
// like with like.
func TestFramesAreStable(t *testing.T) {
	a, err := drawFrames(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := drawFrames(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].text != b[i].text {
			t.Fatalf("%s drawn twice differs", a[i].name)
		}
	}
}
