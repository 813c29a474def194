package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// A match is drawn in the match style, case-insensitively, every time it
// occurs; the text around it keeps its own styles and the line its width.
func TestHighlightMarksEveryMatch(t *testing.T) {
	th := NewTheme(true, false)
	line := th.Muted.Render("ran Check 1 ·") + th.Text.Render(" check 12")
	got := highlight(th, line, "check 1")
	if n := strings.Count(got, th.Match.Render("Check 1")) + strings.Count(got, th.Match.Render("check 1")); n != 2 {
		t.Fatalf("%d matches highlighted in %q", n, got)
	}
	if ansi.Strip(got) != ansi.Strip(line) {
		t.Fatalf("highlighting changed the text: %q", ansi.Strip(got))
	}
	// " check 12" is drawn in the Text style: the "2" after its match still is.
	open := strings.TrimSuffix(th.Text.Render("x"), "x\x1b[m")
	last := th.Match.Render("check 1")
	if i := strings.LastIndex(got, last); i < 0 || !strings.Contains(got[i+len(last):], open) {
		t.Fatalf("the text after a match lost its style: %q", got)
	}
	if highlight(th, line, "absent") != line || highlight(th, line, "") != line {
		t.Fatal("a line without a match changed")
	}
}

// n and N wrap around the matches; the first match is the cursor's own
// row when it matches.
func TestSearchTargetWraps(t *testing.T) {
	s := Search{query: "x", hits: []int{2, 5, 9}}
	for _, c := range []struct{ cur, dir, want int }{
		{5, 0, 5}, {6, 0, 9}, {10, 0, 2}, {5, 1, 9}, {9, 1, 2}, {5, -1, 2}, {2, -1, 9}, {0, -1, 9},
	} {
		if got, ok := s.Target(c.cur, c.dir); !ok || got != c.want {
			t.Errorf("Target(%d, %d) = %d, want %d", c.cur, c.dir, got, c.want)
		}
	}
}

func TestStepTools(t *testing.T) {
	got := stepTools(`spawn_agent:{"as":"a"} | run:{"cmd":"x"} | plain`)
	if strings.Join(got, ",") != "spawn_agent,run,plain" {
		t.Fatalf("tools %v", got)
	}
	if len(stepTools("")) != 0 {
		t.Fatal("an empty call names a tool")
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, q string
		want bool
	}{
		{"Ran Check 12", "check 1", true}, {"ran check", "check 1", false}, {"", "a", false}, {"abc", "", true},
		{"ÄRGER über", "ärger", true}, {"grep TODO", "todo", true}, {"xx", "xxx", false},
	} {
		if got := containsFold(c.s, c.q); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.s, c.q, got)
		}
	}
}

// A step's head line wraps at a narrow width rather than lose its last facts.
func TestStepHeadWraps(t *testing.T) {
	d := &store.StepDetail{Step: store.Step{Number: 3, Pending: true, Latency: 13 * time.Second,
		Retries: []store.Retry{{Kind: store.StepRetry, Decision: "retry 1"}}},
		ProviderCalls: []store.ProviderCall{{Provider: "a"}, {Provider: "b"}}}
	p := NewDetail(&Env{Theme: NewTheme(true, true), Keys: keymap.Default(), Now: time.Now})
	p.SetSize(42, 20)
	p.Set(d)
	all := strings.Join(strings.Fields(ansi.Strip(p.View(true))), " ")
	if !strings.Contains(all, "2 provider attempts") || !strings.Contains(all, "step 3 · not committed yet") {
		t.Fatalf("the head lost a fact at 40 cells:\n%s", all)
	}
}
