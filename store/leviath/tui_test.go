package leviath

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/tui"
)

// explorer drives the real explorer model synchronously, as the Bubble Tea
// runtime would: each command runs and its message is fed back (batches
// recursed into) until nothing is left; a command that does not answer
// within cmdTimeout is a timer and is dropped.
type explorer struct {
	t       testing.TB
	m       *tui.Model
	live    bool           // keep slow commands (the watcher's) and deliver their messages later
	pending []chan tea.Msg // commands still running
}

const cmdTimeout = 250 * time.Millisecond

func newExplorer(t testing.TB, src *Store, w, h int, now time.Time) *explorer {
	return startExplorer(t, src, w, h, now, false)
}

// startExplorer with live set runs the watcher too (NoWatch false).
func startExplorer(t testing.TB, src *Store, w, h int, now time.Time, live bool) *explorer {
	t.Helper()
	e := &explorer{t: t, live: live, m: tui.New(tui.Options{Source: src, NoWatch: !live, NoTick: true, NoColor: true,
		Now: func() time.Time { return now }, StoreLabel: "~/.leviath/runs", Run: idRoot, Decisions: tempDecisions(t)})}
	t.Cleanup(e.m.Close)
	e.send(tea.WindowSizeMsg{Width: w, Height: h})
	e.run(e.m.Init())
	return e
}

func (e *explorer) send(msg tea.Msg) {
	_, cmd := e.m.Update(msg)
	e.run(cmd)
}

func (e *explorer) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-ch:
	case <-time.After(cmdTimeout):
		if e.live {
			e.pending = append(e.pending, ch)
		}
		return
	}
	e.deliver(msg)
}

func (e *explorer) deliver(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			e.run(c)
		}
	default:
		e.send(msg)
	}
}

func (e *explorer) press(keys ...string) {
	for _, k := range keys {
		r := []rune(k)[0]
		e.send(tea.KeyPressMsg{Code: r, Text: k})
	}
}

func (e *explorer) screen() string { return ansi.Strip(e.m.Render()) }

func (e *explorer) contains(want ...string) {
	e.t.Helper()
	s := e.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			e.t.Fatalf("the screen lacks %q:\n%s", w, s)
		}
	}
}

// waitFor delivers what pending commands answer until the screen shows
// every text, or fails after five seconds.
func (e *explorer) waitFor(want ...string) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := e.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the screen never showed %q:\n%s", missing, s)
		}
		e.pump()
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *explorer) pump() {
	for i := 0; i < len(e.pending); i++ {
		select {
		case msg := <-e.pending[i]:
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			e.deliver(msg)
			return
		default:
		}
	}
}

// The real explorer over a Leviath source, no special case anywhere: the
// runs, the agent tree, a timeline with its step, the drift pane and the
// waiting (read-only) request.
func TestExplorerShowsEveryPane(t *testing.T) {
	_, src := openFx(t)
	e := newExplorer(t, src, 200, 60, time.Unix(t0+600, 0))
	e.contains(
		// runs: the live tree first, a queued run, an unreadable one
		"1 Runs", "Coordinate the 2.4.0 release", "Waiting for the daemon", "Written by Leviath 9", "(unreadable: run.lvr",
		// the tree: parent, children, grandchild, with their states
		"#release-…e0b7", "◆ #version-…a4d3", "✓ #changelo…e5f6",
		"└─ ■ #link-che…4e5f", "waiting", "complete", "error",
		// the root's timeline and its last step
		"3 Timeline · #release-…e0b7", "0 user: Coordinate the 2.4.0 release",
		`1 assistant: Splitting the release into two sub-agents. · spawn_agent {"agent":"changelog-writer"}`,
		"1 result spawn_agent", "1 restart: a new daemon took the run over", "8 steps",
		"4 Step 3", "Model said", "Changelog is done; version bump waits for the operator.",
		// drift: Leviath's estimates, nothing reported in a 0.1.x journal
		"5 Drift", "6 missing",
		// the waiting request, read-only
		"6 Approvals", "1 waiting · read-only", "question c07f5e19a4d3/1", "Bump the version from 2.3.1 to 2.4.0 in pyproject.toml?",
		"1. approve", "‖ Leviath's prompts are not durable: answer it in lev",
		// the status bar
		"read-only", "live", "1 waiting (6)",
	)
	// Down the tree (children in start order): the HEAD child with provider
	// counts in the drift pane, the grandchild, the waiting child.
	e.press("2", "j")
	e.contains("3 Timeline · #changelo…e5f6", "2 status: complete", "1.7k", "1.8k", "2 missing")
	e.press("j")
	e.contains("3 Timeline · #link-che…4e5f", "1 error http_get", "1 status: error — link check timed out")
	e.press("j")
	e.contains("3 Timeline · #version-…a4d3", "1 status: waiting_input", "2 assistant: Asking the operator to confirm.")
	if strings.Contains(e.screen(), secret) {
		t.Fatal("the secret is on screen")
	}
}

// With the watcher on (directory mode, this source's WatchSpec), frames
// appended by "the daemon" reach the screen by themselves.
func TestExplorerFollowsTheJournal(t *testing.T) {
	fx, src := openFx(t)
	e := startExplorer(t, src, 200, 60, time.Unix(t0+600, 0), true)
	e.waitFor("8 steps")
	g := fx.gens[idRoot]
	g.meta.iteration, g.meta.prompt, g.meta.completion = 4, 5000, 260
	g.progress(t0+60, g.appendD("conversation", turnE("Publishing now.", genCall{"toolu_P", "bash", args("command", "make publish")})))
	e.waitFor("4 assistant: Publishing now. · bash {\"command\":\"make publish\"}", "9 steps")
	// The operator answers in lev: the request under the Approvals cursor
	// stays in place, saying it was decided elsewhere, and no longer counts.
	v := fx.gens[idVersion]
	v.meta.status = "running"
	v.progress(t0+90, v.appendD("conversation", resultE("toolu_02", "ask_user_confirm", "yes", false)))
	e.waitFor("✗ decided elsewhere: answered “left waiting_input (now running)”", "by lev")
	if strings.Contains(e.screen(), "1 waiting (6)") {
		t.Fatal("a request decided elsewhere still counts as waiting")
	}
	// A new sub-agent directory joins the tree.
	m := baseMeta("publisher-1785427900-0c1c2c3c4c5c", "publisher", "Publish 2.4.0", t0+590)
	m.parent, m.depth = idRoot, 1
	newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	e.waitFor("#publishe…4c5c")
}

// tempDecisions records the explorer's decisions in a log of the test's
// own, never the user's.
func tempDecisions(t testing.TB) *decision.Maker {
	state := t.TempDir()
	return decision.Local(func(k string) string { return map[string]string{"XDG_STATE_HOME": state, "USER": "tester"}[k] }, "the explorer")
}
