package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

func withNotify(n Notify) func(*Options) { return func(o *Options) { o.Notify = n } }

// arrive starts a live run that asks for an approval at its first step,
// as a harness would, through a second handle, and refreshes.
func arrive(t *testing.T, d *driver, target string) {
	t.Helper()
	ctx, w := context.Background(), d.writer()
	run, err := w.StartRun(ctx, "ship the docs", "/work/shop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutPending(ctx, run, 1, "read", target, nil); err != nil {
		t.Fatal(err)
	}
	d.refresh()
}

func TestArrivingRequestRingsAndNotifies(t *testing.T) {
	d := newDriver(t, 120, 40, withNotify(Notify{Desktop: DesktopOSC777}))
	if len(d.m.alert.sent) != 0 {
		t.Fatalf("what waited at start was announced: %q", d.m.alert.sent)
	}
	if got := d.m.View().WindowTitle; got != "◆ 5 waiting · vigil" {
		t.Fatalf("title = %q", got)
	}
	arrive(t, d, "NEWS.md\x1b]0;pwned\x07")
	if len(d.m.alert.sent) != 1 {
		t.Fatalf("sent %q", d.m.alert.sent)
	}
	seq := d.m.alert.sent[0]
	if !strings.HasPrefix(seq, "\a\x1b]777;notify;vigil: a run waits on you;approval 4 read NEWS.md") || !strings.HasSuffix(seq, "\a") {
		t.Fatalf("sent %q", seq)
	}
	if strings.Count(seq, "\x1b") != 1 || strings.Count(seq, "\a") != 2 {
		t.Fatalf("store text put control characters into the notification: %q", seq)
	}
	if got := d.m.View().WindowTitle; got != "◆ 6 waiting · vigil" {
		t.Fatalf("title = %q", got)
	}
	// Nothing new: nothing rings.
	d.refresh()
	if len(d.m.alert.sent) != 1 {
		t.Fatalf("sent again: %q", d.m.alert.sent)
	}
}

func TestNoticesWaitWhileTheTerminalHasTheFocus(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.send(tea.FocusMsg{})
	arrive(t, d, "a.md")
	if len(d.m.alert.sent) != 0 {
		t.Fatalf("rang while focused: %q", d.m.alert.sent)
	}
	d.send(tea.BlurMsg{})
	arrive(t, d, "b.md")
	if len(d.m.alert.sent) != 1 || d.m.alert.sent[0] != "\a" {
		t.Fatalf("sent %q (no desktop protocol known: the bell alone)", d.m.alert.sent)
	}
}

func TestEachNoticeCanBeTurnedOff(t *testing.T) {
	d := newDriver(t, 120, 40, withNotify(Notify{NoBell: true, NoTitle: true, Desktop: DesktopOSC9}))
	arrive(t, d, "a.md")
	if len(d.m.alert.sent) != 1 || !strings.HasPrefix(d.m.alert.sent[0], "\x1b]9;vigil: a run waits on you: approval 4 read a.md") {
		t.Fatalf("sent %q", d.m.alert.sent)
	}
	if got := d.m.View().WindowTitle; !strings.HasPrefix(got, "vigil — ") {
		t.Fatalf("title = %q", got)
	}
	d = newDriver(t, 120, 40, withNotify(Notify{NoBell: true, NoDesktop: true, Desktop: DesktopOSC9}))
	arrive(t, d, "a.md")
	if len(d.m.alert.sent) != 0 {
		t.Fatalf("sent %q with bell and desktop off", d.m.alert.sent)
	}
}

func TestReadOnlyViewerIsNotRungFor(t *testing.T) {
	d := newDriver(t, 120, 40, readOnlySource(t))
	arrive(t, d, "a.md")
	if len(d.m.alert.sent) != 0 {
		t.Fatalf("a viewer that cannot decide was rung for: %q", d.m.alert.sent)
	}
	if got := d.m.View().WindowTitle; got != "◆ 6 waiting · vigil" {
		t.Fatalf("title = %q", got)
	}
}

func TestDetectDesktop(t *testing.T) {
	for _, c := range []struct {
		env        map[string]string
		tmuxAllows bool
		want       Desktop
		tmux       bool
	}{
		{map[string]string{"TERM_PROGRAM": "iTerm.app"}, false, DesktopOSC9, false},
		{map[string]string{"TERM_PROGRAM": "WezTerm"}, false, DesktopOSC9, false},
		{map[string]string{"TERM": "xterm-ghostty"}, false, DesktopOSC9, false},
		{map[string]string{"TERM": "xterm-kitty"}, false, DesktopOSC99, false},
		{map[string]string{"VTE_VERSION": "7600", "TERM": "xterm-256color"}, false, DesktopOSC777, false},
		{map[string]string{"TERM": "rxvt-unicode-256color"}, false, DesktopOSC777, false},
		{map[string]string{"TERM": "xterm-256color"}, false, DesktopNone, false},
		// Inside tmux: the outer terminal from what it left in the environment.
		{map[string]string{"TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux", "LC_TERMINAL": "iTerm2"}, true, DesktopOSC9, true},
		{map[string]string{"TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux", "KITTY_WINDOW_ID": "1"}, false, DesktopNone, false},
		{map[string]string{"TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux"}, true, DesktopNone, false},
	} {
		got, tmux := DetectDesktop(func(k string) string { return c.env[k] }, c.tmuxAllows)
		if got != c.want || tmux != c.tmux {
			t.Errorf("%v (tmux allows %v): %q tmux=%v, want %q tmux=%v", c.env, c.tmuxAllows, got, tmux, c.want, c.tmux)
		}
	}
}

func TestDesktopSequenceThroughTmux(t *testing.T) {
	got := desktopSeq(Notify{Desktop: DesktopOSC99, Tmux: true}, "vigil", "approval 1")
	want := "\x1bPtmux;\x1b\x1b]99;;vigil: approval 1\x1b\x1b\\\x1b\\"
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// The next-waiting key: from any pane to the next request this viewer can
// decide, and back where it came from.
func TestJumpToNextWaitingAndBack(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("3")
	d.press("w")
	if d.m.focus != paneApprovals {
		t.Fatalf("focus = %v", d.m.focus)
	}
	first := selectedRequest(d)
	if first == "approval 1" || first == "" {
		t.Fatalf("jumped to %q (approval 1 cannot be decided: its run is paused)", first)
	}
	d.contains("asked by")
	d.press("w")
	if d.m.focus != paneTimeline {
		t.Fatalf("w again did not go back: focus = %v", d.m.focus)
	}
	// From the Approvals pane itself: on to the next one, and back.
	d.press("6")
	before := selectedRequest(d)
	d.press("w")
	next := selectedRequest(d)
	if next == before {
		t.Fatalf("w stayed on %q", next)
	}
	d.press("w")
	if got := selectedRequest(d); got != before {
		t.Fatalf("back went to %q, want %q", got, before)
	}
}

// readOnlySource opens the driver's store read-only.
func readOnlySource(t *testing.T) func(*Options) {
	return func(o *Options) {
		ro, err := ioharness.OpenReadOnly(o.Source.Path())
		if err != nil {
			t.Fatal(err)
		}
		o.Source.Close()
		o.Source = store.Complete(ro)
	}
}
