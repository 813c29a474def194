package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/tui"
)

// The server's config draws and drives every session: its keys (help on
// f1, the timeline on F3) in a watching session and in one's own explorer,
// whatever the connecting user's machine would say.
func TestSessionsTakeTheServersKeys(t *testing.T) {
	k := keymap.Default()
	if err := k.Remap(map[string][]string{"help": {"f1"}, "pane_3": {"f3"}}); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.Look = tui.Look{Keys: &k} })
	tm := openTerm(t, ts, ts.viewer, 120, 40)
	tm.waitFor("Coordinate the v2.0 release", 10*time.Second)
	tm.waitFor("f1 help", 2*time.Second) // the shared view
	tm.typ("\x1bOR")                     // F3
	tm.waitFor("vera@laptop (viewer)", 5*time.Second)
	tm.waitFor("4 Step 4 ", 2*time.Second) // F3 focused the timeline
	if scr := tm.scr.String(); !strings.Contains(scr, "f1 help") || strings.Contains(scr, "? help") {
		t.Fatalf("the session's own explorer does not take the server's keys; its screen:\n%s", scr)
	}
}

// With the config's protocol on auto, a session's desktop notifications
// take the sequence of the terminal its client names (not the server's);
// a protocol the config fixes is used as it is; the switches are the
// config's.
func TestSessionNotifyIsTheServersForTheClientsTerminal(t *testing.T) {
	s := &Server{cfg: Config{Notify: tui.Notify{NoBell: true, Desktop: tui.DesktopOSC777}, DetectDesktop: true}}
	n := s.notifyFor([]string{"TERM=xterm-256color", "TERM_PROGRAM=WezTerm"})
	if n.Desktop != tui.DesktopOSC9 || !n.NoBell {
		t.Fatalf("a WezTerm client got %+v, want OSC 9 and no bell", n)
	}
	if n := s.notifyFor([]string{"TERM=xterm-kitty"}); n.Desktop != tui.DesktopOSC99 {
		t.Fatalf("a kitty client got %+v, want OSC 99", n)
	}
	if n := s.notifyFor([]string{"TERM=xterm-256color"}); n.Desktop != tui.DesktopNone {
		t.Fatalf("an unknown terminal got %+v, want the bell alone", n)
	}
	s.cfg.DetectDesktop = false
	if n := s.notifyFor([]string{"TERM=xterm-kitty"}); n.Desktop != tui.DesktopOSC777 {
		t.Fatalf("the config's fixed protocol gave way: %+v", n)
	}
}
