package starweaver

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

// The real explorer model over a Starweaver database, driven synchronously
// as the Bubble Tea runtime would: every command runs and its message is
// fed back until things settle; a command that does not answer within
// cmdWait is a timer and is dropped.

const cmdWait = 250 * time.Millisecond

type explorer struct {
	t     *testing.T
	m     *tui.Model
	clock time.Time
}

func newExplorer(t *testing.T, src store.Source, w, h int) *explorer {
	t.Helper()
	e := &explorer{t: t, clock: at("10:30:00")}
	e.m = tui.New(tui.Options{Source: src, NoWatch: true, NoTick: true, NoColor: true,
		Now: func() time.Time { return e.clock }, StoreLabel: "starweaver.sqlite", Decisions: tempDecisions(t)})
	t.Cleanup(e.m.Close)
	e.send(tea.WindowSizeMsg{Width: w, Height: h})
	e.run(e.m.Init())
	return e
}

// send and run drive the model synchronously, as the explorer's own tests
// do (tui.Model.Settle).
func (e *explorer) send(msg tea.Msg) { e.m.Settle(msg, cmdWait) }

func (e *explorer) run(cmd tea.Cmd) { e.m.RunCmd(cmd, cmdWait) }

func (e *explorer) press(keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			e.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "tab":
			e.send(tea.KeyPressMsg{Code: tea.KeyTab})
		default:
			r := []rune(k)[0]
			e.send(tea.KeyPressMsg{Code: r, Text: k})
		}
	}
}

func (e *explorer) screen() string { return ansi.Strip(e.m.Render()) }

func (e *explorer) contains(want ...string) {
	e.t.Helper()
	s := e.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			e.t.Fatalf("screen lacks %q:\n%s", w, s)
		}
	}
}

func (e *explorer) lacks(bad ...string) {
	e.t.Helper()
	s := e.screen()
	for _, b := range bad {
		if strings.Contains(s, b) {
			e.t.Fatalf("screen has %q:\n%s", b, s)
		}
	}
}

func (e *explorer) advance(d time.Duration) { e.clock = e.clock.Add(d) }

// The panes work over a Starweaver database as they do over io-harness:
// runs (continuations as roots, statuses read right), the agent tree
// (subagents under the run that delegated them), timelines (a subagent's
// read from its parent's stream), step detail, the approvals queue with
// what can and cannot be decided, and a decision made by keyboard.
func TestExplorerPanes(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	e := newExplorer(t, s, 200, 56)
	// Runs: every root, newest first, statuses as the run records say.
	e.contains("1 Runs", "7 runs",
		"cancelled", "SWACC-RUN-7: try again",
		"paused ◆3", "SWACC-RUN-5: fix the p",
		"failed", "SWACC-RUN-6: summarise",
		"finished", "SWACC-RUN-4: review th",
		"running?", "SWACC-RUN-3: finish th",
		"continued ◆2", "SWACC-RUN-2: continue ",
		"continued", "SWACC-RUN-1: inventory",
		// The newest run is open; a failed provider call reads as such.
		"3 Timeline · #run_3e4f…a1b2 SWACC-RUN-7", "run cancelled: user interrupt",
		// Nothing invented for the drift pane.
		"no context samples for this agent",
		// The queue: five waiting; the claimed run's requests cannot be decided.
		"6 Approvals", "5 waiting", "is being resumed (claim claim-")
	e.lacks("SWACC-RUN-3: finish the migration after review\nResuming")
	// Open R3 (fifth, newest first): its tree is R3 → S1 → S2.
	e.press("1", "j", "j", "j", "j", "enter")
	e.contains("2 Agents", "3 agents",
		"○ #run_e2f9…7ce1 SWACC-RUN-3: finish the migr… running?",
		"└─ ✓ #run_d7a3…2c1d check payouts for ORM use  finished        3 st",
		"   └─ ✓ #run_c1f0…9e8f check payouts/ledger    finished        1 st",
		"Delegating the payouts check to a subagent.", "6.1k", "liveness unknown")
	// Down the tree: S1's own timeline, then S2's, read from S1's stream.
	e.press("j")
	e.contains("3 Timeline · #run_d7a3…2c1d check payouts for ORM use",
		"Searching payouts.", "result grep", "Asking a helper to double-check", "payouts has no ORM use.", "5 steps")
	e.press("j")
	e.contains("Checked payouts/ledger: clean.", "830")
	// R1's timeline and a step's detail.
	e.press("1", "G", "enter")
	e.contains("The ledger still uses the legacy ORM", "approval required: edit_file", "suspended: waits on a human")
	e.press("3", "k", "k")
	e.advance(time.Second)
	e.run(tea.Tick(0, func(time.Time) tea.Msg { return nil }))
	e.contains("4 Step 2", "edit_file (toolu_01bpMyt24NkYt8wDp3fNXvH8)", "The ledger still uses the legacy ORM; noting it.")

	// Approve P1 by keyboard: focus the queue, wait out the misfire guard,
	// select it, a, y.
	e.press("6")
	e.advance(2 * time.Second)
	e.press("j", "j")
	e.advance(2 * time.Second)
	e.contains("RUN_SHELL go test ./payouts/...")
	e.press("a", "y")
	// The outcome wraps, never cut: the whole request id is on screen.
	e.contains("✓ approved: approval approval_run_2d3e4f50-6172-4839-94a5-", "b6c7d8e9f0a1_toolu_01P1shellXa9", "4 waiting")
	r, err := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: apprP1})
	if err != nil || !r.Resolved || r.Decision != "approve" || r.DecidedBy != DecidedBy {
		t.Fatalf("the keyboard decision is not in the database: %+v %v", r, err)
	}
	// The claimed request cannot be decided from the queue.
	e.press("g")
	e.advance(2 * time.Second)
	e.press("a")
	e.contains("cannot decide: run run_08b58937-8142-4bc8-97b0-fb4a765f9927 is being resumed")
	if r, _ := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: apprR2}); r.Resolved {
		t.Fatal("a claimed request was decided")
	}
}

// tempDecisions records the explorer's decisions in a log of the test's
// own, never the user's.
func tempDecisions(t testing.TB) *decision.Maker {
	state := t.TempDir()
	return decision.Local(func(k string) string { return map[string]string{"XDG_STATE_HOME": state, "USER": "tester"}[k] }, "the explorer")
}
