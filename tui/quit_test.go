package tui

import "testing"

func TestQuitWithADraftAsksFirst(t *testing.T) {
	d := newDriver(t, 120, 40)
	onRequest(t, d, question1)
	d.press("enter")
	d.typeText("keep it")
	d.press("ctrl+c")
	if d.quit {
		t.Fatal("ctrl+c quit with an answer typed")
	}
	d.contains("unsent text in Approvals: ctrl+c again quits and loses it; any other key goes on")
	// Any other key goes on, into the answer.
	d.typeText("!")
	d.lacks("ctrl+c again quits")
	if got := d.m.approvals.Draft(); got != "keep it!" {
		t.Fatalf("draft = %q", got)
	}
	// q is a letter while typing.
	d.press("q")
	if d.quit || d.m.approvals.Draft() != "keep it!q" {
		t.Fatalf("q while typing: quit=%v draft=%q", d.quit, d.m.approvals.Draft())
	}
	d.press("ctrl+c")
	d.press("ctrl+c")
	if !d.quit {
		t.Fatal("a second ctrl+c did not quit")
	}
}

// Text kept from a request decided elsewhere counts as a draft: q asks too.
func TestQuitWithAKeptDraftAsksFirst(t *testing.T) {
	d := newDriver(t, 120, 40)
	onRequest(t, d, plan1)
	d.press("r")
	d.typeText("tag later")
	decideElsewhere(t, d.path, planApprove)
	d.refresh()
	d.press("q")
	if d.quit {
		t.Fatal("q quit with unsent text kept on screen")
	}
	d.contains("ctrl+c again quits")
	d.press("q")
	if !d.quit {
		t.Fatal("a second q did not quit")
	}
}

func TestQuitWithoutADraftQuitsAtOnce(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("q")
	if !d.quit {
		t.Fatal("q did not quit")
	}
	d = newDriver(t, 120, 40)
	d.press("ctrl+c")
	if !d.quit {
		t.Fatal("ctrl+c did not quit")
	}
}
