package serve

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Two sessions with explorers of their own, their cursors on different
// steps: a commit reaches both screens within a frame's budget (well
// within a second here), and each keeps its own selection: the one that
// was following follows to the new step, the one that had moved up stays
// on its step, and its next key moves from there.
func TestOwnSessionsKeepTheirCursors(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.viewer, 120, 40)
	b := openTerm(t, ts, ts.approve, 120, 40)
	for _, tm := range []*term{a, b} {
		tm.waitFor("Coordinate the v2.0 release", 10*time.Second)
		tm.typ("3")
	}
	a.waitFor("vera@laptop (viewer)", 5*time.Second)
	b.waitFor("alice@desk (approver)", 5*time.Second)
	b.waitFor("4 Step 4 ", 2*time.Second)
	a.typ("k")
	a.waitFor("4 Step 3 ", 2*time.Second)

	w, err := harness.OpenWriter(ts.store)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "probe-step-five", Result: "ok", Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	committed := time.Now()
	a.waitFor("probe-step-five", 2*time.Second)
	b.waitFor("probe-step-five", 2*time.Second)
	if d := time.Since(committed); d > time.Second {
		t.Errorf("the commit reached both screens after %s", d)
	}
	b.waitFor("4 Step 5 ", 2*time.Second) // following: onto the new step
	time.Sleep(3 * frameEvery)
	if scr := a.scr.String(); !strings.Contains(scr, "4 Step 3 ") || strings.Contains(scr, "4 Step 5 ") {
		t.Fatalf("the session that had moved up lost its selection; its screen:\n%s", scr)
	}
	a.typ("j")
	a.waitFor("4 Step 4 ", 2*time.Second)
	time.Sleep(3 * frameEvery)
	if scr := b.scr.String(); !strings.Contains(scr, "4 Step 5 ") {
		t.Fatalf("another session's key moved this one's cursor; its screen:\n%s", scr)
	}
	// Each screen is whole: the timeline's rows, the status bar, every
	// border, as drawn a row at a time.
	for _, tm := range []*term{a, b} {
		scr := tm.scr.String()
		rows := strings.Split(strings.TrimRight(scr, "\n"), "\n")
		if len(rows) < 40 || !strings.HasPrefix(rows[0], "╭─ 1 Runs") || !strings.Contains(rows[39], "? help") {
			t.Errorf("a screen drawn a row at a time is not whole:\n%s", scr)
		}
	}
}

// A session with an explorer of its own closed by the idle timeout gets its
// terminal back (the main screen, the cursor, no mouse reporting) before
// the line that says why, so the line is read on the user's own screen.
func TestIdleTimeoutGivesTheTerminalBack(t *testing.T) {
	tm := ownViewer(t, 4*time.Second)
	tm.waitText("closed after 4s without a key pressed", 10*time.Second)
	out := tm.out.String()
	back, line := strings.LastIndex(out, "\x1b[?1049l"), strings.Index(out, "closed after 4s")
	if back < 0 || back > line {
		t.Fatalf("the terminal was not given back before the idle line: %q", tail(out, 300))
	}
	if reset := out[max(back-60, 0):line]; !strings.Contains(reset, "\x1b[?25h") || !strings.Contains(reset, "\x1b[?1002l") {
		t.Fatalf("the terminal was not given back before the idle line: %q", tail(out, 300))
	}
}

// Keys keep a session open, counted as they come from the client (even
// before its explorer has taken them); a terminal's answers to queries
// are no keys: a session that only answers is closed.
func TestKeysKeepASessionOpenRepliesDoNot(t *testing.T) {
	tm := ownViewer(t, 4*time.Second)
	for range 12 { // ten keys a timeout: a starved machine still sees them in time
		time.Sleep(400 * time.Millisecond)
		tm.typ("j")
	}
	lastKey := time.Now()
	if strings.Contains(tm.text(), "without a key pressed") {
		t.Fatalf("a session typed in every 400ms was closed as idle: %q", tail(tm.text(), 300))
	}
	closed := false
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end) && !closed; {
		// A background colour report; a write that meets the session
		// closed says it was closed.
		if _, err := io.WriteString(tm.in, "\x1b]11;rgb:0000/0000/0000\x1b\\"); err != nil {
			break
		}
		closed = strings.Contains(tm.text(), "without a key pressed")
		time.Sleep(300 * time.Millisecond)
	}
	if !closed && time.Since(lastKey) >= 12*time.Second {
		t.Fatalf("12s of colour reports after the last key kept the session open: %q", tail(tm.text(), 300))
	}
	// Closed while the answers came: its last line may still be on its
	// way to the client on a loaded machine.
	tm.waitText("closed after 4s without a key pressed", 5*time.Second)
}

// Fifty sessions of one store share what a commit brings them (one tail,
// one read of each step's detail), never what is a session's own: two
// sessions whose cursors are on different steps show, after the same
// commit, each the detail of its own step, and a filter typed in one
// filters that one's run list alone.
func TestOwnSessionsShareNoSelection(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.viewer, 120, 40)
	b := openTerm(t, ts, ts.approve, 120, 40)
	for _, tm := range []*term{a, b} {
		tm.waitFor("Coordinate the v2.0 release", 10*time.Second)
		tm.typ("3")
	}
	a.waitFor("vera@laptop (viewer)", 5*time.Second)
	b.waitFor("alice@desk (approver)", 5*time.Second)
	b.waitFor("4 Step 4 ", 2*time.Second)
	a.typ("k")
	a.waitFor("4 Step 3 ", 2*time.Second)
	a.waitFor("the tree already has its 4 agents", 2*time.Second) // step 3's result, in its detail

	w, err := harness.OpenWriter(ts.store)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "probe-step-five", Result: "detail-of-step-five", Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	b.waitFor("detail-of-step-five", 2*time.Second) // following: the new step's detail
	a.waitFor("probe-step-five", 2*time.Second)
	time.Sleep(3 * frameEvery)
	if scr := a.scr.String(); strings.Contains(scr, "detail-of-step-five") || !strings.Contains(scr, "the tree already has its 4 agents") {
		t.Fatalf("the session on step 3 shows another session's detail; its screen:\n%s", scr)
	}
	if scr := b.scr.String(); strings.Contains(scr, "the tree already has its 4 agents") {
		t.Fatalf("the following session shows another session's detail; its screen:\n%s", scr)
	}

	// A filter typed in one session's run list is that session's.
	a.typ("1/zzz-no-such-run")
	a.waitFor("no run matches the filter", 2*time.Second)
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 6, Decision: "probe-step-six", Result: "ok", Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	b.waitFor("probe-step-six", 2*time.Second)
	time.Sleep(3 * frameEvery)
	if scr := b.scr.String(); strings.Contains(scr, "no run matches the filter") || !strings.Contains(scr, "Coordinate the v2.0 release") {
		t.Fatalf("another session's filter reached this one's run list; its screen:\n%s", scr)
	}
	if scr := a.scr.String(); !strings.Contains(scr, "no run matches the filter") {
		t.Fatalf("a commit undid the session's own filter; its screen:\n%s", scr)
	}
}

// ownViewer is the viewer's session with an explorer of its own (a key
// pressed), on a server that closes sessions idle for idle.
func ownViewer(t *testing.T, idle time.Duration) *term {
	t.Helper()
	ts := startServer(t, func(c *Config) { c.IdleTimeout = idle })
	tm := openTerm(t, ts, ts.viewer, 120, 40)
	tm.waitFor("Coordinate the v2.0 release", 10*time.Second)
	tm.typ("3")
	tm.waitFor("vera@laptop (viewer)", 5*time.Second)
	return tm
}
