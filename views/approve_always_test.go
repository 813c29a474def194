package views

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// Issue 28 item 6: a gate request that carries Claude Code's permission
// suggestions says what they allow and which key takes them; A asks with
// them in the question and sends the approval with Always; a request that
// offers nothing says why A does nothing. The request's link to the agent's
// run and tool call is on screen.
func TestApproveAlwaysWithKeys(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	clock := now
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return clock }}
	p := NewApprovals(env)
	p.SetSize(100, 20)
	offers := store.Request{Kind: store.Approval, ID: "gate/1", Act: "exec", Target: "Bash: git init -q",
		AlwaysAllow: "allow Bash(git init *) in .claude/settings.local.json",
		For:         store.RunLink{Format: "claude-code", RunID: "s1/abc", CallID: "toolu_1", InSet: true}}
	plain := store.Request{Kind: store.Approval, ID: "gate/2", Act: "exec", Target: "Bash: ls"}
	p.SetItems([]ApprovalItem{{Req: offers, Delivery: store.Deliverable}, {Req: plain, Delivery: store.Deliverable}}, now)
	clock = now.Add(2 * time.Second) // past the misfire guard
	view := func() string { return ansi.Strip(p.View(true)) }
	for _, want := range []string{"for claude-code run s1/abc · call toolu_1", "A also allows from now on: allow Bash(git init *)"} {
		if !strings.Contains(view(), want) {
			t.Fatalf("the request's detail lacks %q:\n%s", want, view())
		}
	}
	p.Key(tea.KeyPressMsg{Code: 'A', Text: "A"})
	if !strings.Contains(view(), "Approve exec Bash: git init -q, and from now on allow Bash(git init *)") {
		t.Fatalf("A does not ask with the always-allow:\n%s", view())
	}
	in := p.Key(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if in.Kind != Decide || !in.Decision.Always || in.Decision.Verdict != store.VerdictApprove || in.Decision.Key != offers.Key() {
		t.Fatalf("y after A sent %+v", in)
	}

	// The plain request: A says why not, a still approves once.
	p.SetItems([]ApprovalItem{{Req: plain, Delivery: store.Deliverable}}, clock)
	clock = clock.Add(2 * time.Second)
	p.Key(tea.KeyPressMsg{Code: 'A', Text: "A"})
	if !strings.Contains(view(), "this request offers nothing: a approves it once") {
		t.Fatalf("A on a request that offers nothing:\n%s", view())
	}
	p.Key(tea.KeyPressMsg{Code: 'a', Text: "a"})
	in = p.Key(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if in.Kind != Decide || in.Decision.Always {
		t.Fatalf("a then y sent %+v", in)
	}
}
