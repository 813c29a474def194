package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
)

// A terminal with bracketed paste on sends a paste as one tea.PasteMsg:
// it lands in the text field being typed, cleaned as typed text is.

// openAnswer focuses the queue and opens the answer to question 1.
func openAnswer(d *driver) {
	d.t.Helper()
	focusRequest(d, "question 1")
	d.press("e")
	d.contains("an answer, or the number of a choice")
}

func TestPasteIntoAnswer(t *testing.T) {
	d := newDriver(t, 120, 40)
	openAnswer(d)
	d.send(tea.PasteMsg{Content: "plain paste"})
	d.contains("› plain paste")
	d.press("enter")
	d.contains("✓ answered: question 1")
	q := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Question, ID: "1"})
	if q.Decision != "plain paste" {
		t.Fatalf("the answer written is %q, not the paste", q.Decision)
	}
}

func TestPasteIsCleanedAsTypedText(t *testing.T) {
	d := newDriver(t, 120, 40)
	openAnswer(d)
	d.send(tea.PasteMsg{Content: "a\x1b]0;PWNED\x07b\r\nc"})
	frame := d.m.Render()
	if strings.ContainsAny(frame, "\x07\r") || strings.Contains(frame, "\x1b]") {
		t.Fatalf("the paste's control characters reached the frame: %q", frame)
	}
	d.contains("› a]0;PWNEDb  c") // ESC and BEL dropped, the line break made spaces
	d.press("enter")
	q := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Question, ID: "1"})
	if q.Decision != "a]0;PWNEDb  c" {
		t.Fatalf("the answer written is %q", q.Decision)
	}
}

func TestPasteWithNoFieldOpenIsDropped(t *testing.T) {
	d := newDriver(t, 120, 40)
	focusRequest(d, "question 1")
	before := d.screen()
	d.send(tea.PasteMsg{Content: "e2\rq"}) // as keys: answer 2, then quit
	if d.quit {
		t.Fatal("a paste quit")
	}
	if after := d.screen(); after != before {
		t.Fatalf("a paste with no field open changed the screen:\n%s", after)
	}
	if q := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Question, ID: "1"}); q.Resolved {
		t.Fatalf("a paste answered: %+v", q)
	}
}

func TestPasteIntoSearch(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("6", "/")
	d.send(tea.PasteMsg{Content: "question"})
	d.contains("/question")
}
