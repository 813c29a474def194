package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/views"
)

// The whole app in a real Bubble Tea program, watching a store that another
// handle writes to: a committed step appears on screen by itself (pushed by
// the watcher, no key pressed), and an approval made with the keyboard lands
// in the store.
func TestAppTailsAndApproves(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m := New(Options{Source: src, NoColor: true, Reopen: func() (store.Source, error) { return ioharness.Open(path) }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	// Wait for text the renderer writes fresh. (It sends only the cells
	// that change, so text already on screen is not sent again.)
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), what) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("Coordinate the v2.0 release")

	ctx := context.Background()
	if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: 5, Decision: "tagged v2.0.0-rc1", Result: "ok", Tokens: 700}); err != nil {
		t.Fatal(err)
	}
	wait("tagged v2.0.0-rc1")

	tm.Type("6")
	tm.Type("j")
	// Decision keys count only once the misfire guard has let go (at most
	// its ceiling after the request came into view).
	time.Sleep(views.QuietCeiling + 200*time.Millisecond)
	tm.Type("a")
	tm.Type("y")
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, err := w.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "2"})
		if err == nil && req.Decision == string(store.VerdictApprove) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approval did not land: %+v %v", req, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	fm := tm.FinalModel(t).(*Model)
	if frame := fm.Render(); !strings.Contains(frame, "✓ approved: approval 2") {
		t.Errorf("the queue does not say the approval landed:\n%s", frame)
	}
	if fm.watcher != nil {
		t.Error("the watcher is still running after quit")
	}
	src.Close()
}
