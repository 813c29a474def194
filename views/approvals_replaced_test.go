package views

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// A store rewritten in place (cp over it) can hold another request under
// the id of the one on screen: the queue shows the one the store holds
// now, never the text of the one it held before under that id, and a key
// pressed for the old one does not decide the new one at once.
func TestARequestReplacedUnderItsIDIsShownAsItIsNow(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	p := NewApprovals(env)
	p.SetSize(60, 20)
	ask := func(text string, step int) []ApprovalItem {
		return []ApprovalItem{{Req: store.Request{Kind: store.Question, ID: "1", RunID: "1", Step: step, Question: text}}}
	}
	p.SetItems(ask("why did the build fail?", 1), now)
	if v := p.View(true); !strings.Contains(v, "why did the build fail?") {
		t.Fatalf("the first question is not shown:\n%s", v)
	}
	p.Focus()
	now = now.Add(time.Minute) // long past the misfire guard's first arming
	if p.Quiet(now) {
		t.Fatal("the guard is still armed a minute on")
	}
	p.SetItems(ask("may I delete the release branch?", 2), now)
	if !p.Quiet(now) {
		t.Error("another request under the id on screen did not arm the misfire guard")
	}
	v := p.View(true)
	if strings.Contains(v, "why did the build fail?") || !strings.Contains(v, "may I delete the release branch?") {
		t.Fatalf("after the store was rewritten, the queue shows:\n%s", v)
	}
}
