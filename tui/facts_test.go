package tui

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// foreign writes rows into the driver's store the way io-harness does,
// through Python's sqlite3 (internal/testkit/fixture/harness.py), or skips.
func (d *driver) foreign(calls ...fixture.Call) []int64 {
	d.t.Helper()
	ids, err := fixture.Foreign(d.path, calls...)
	if errors.Is(err, fixture.ErrNoPython) {
		testkit.Need(d.t, "python3", "the foreign writer (harness.py, through Python's sqlite3) writes this test's rows")
	}
	if err != nil {
		d.t.Fatal(err)
	}
	return ids
}

// at is a stamp SQLite's clock would write, offset from the fixture's base.
func at(d time.Duration) string { return fixture.Base.Add(d).Format("2006-01-02T15:04:05.000Z") }

// liveTree is the fixture's live tree as a Broadcast-ing io-harness leaves
// it mid-step: the changelog worker (#5) asked for its write and waits,
// the versions worker (#6) has a tool running, the grandchild (#7) is
// streaming its answer; the root (#4) wrote a plan, has two children
// queued for a slot, the grandchild has a message it has not read, and
// #6 left a dev server running.
func liveTree(d *driver) {
	d.t.Helper()
	C := fixture.C
	ids := d.foreign(
		C("put_event", "run_id", 5, "step", 3, "depth", 1, "event", "approval_requested", "act", "write", "target", "CHANGELOG.md"),
		C("put_event", "run_id", 6, "step", 3, "depth", 1, "event", "tool_call", "name", "run", "target", "go mod tidy"),
		C("put_event", "run_id", 7, "step", 2, "depth", 2, "event", "token", "text", "The replace line points at "),
		C("put_event", "run_id", 7, "step", 2, "depth", 2, "event", "token", "text", "./internal/tools, which CI cannot see."),
		C("write_todos", "run_id", 4, "items", [][2]string{{"read RELEASING.md", "done"}, {"fan out the workers", "active"}, {"tag v2.0.0", "pending"}}),
		C("enqueue_agent", "parent_run_id", 4, "step", 3, "goal", "worker: write the release notes", "depth", 1),
		C("enqueue_agent", "parent_run_id", 4, "step", 3, "goal", "worker: update the docs site", "depth", 1),
		C("send_message", "from_run_id", 6, "to_run_id", 7, "from_name", "versions", "step", 2, "body", "go.mod pins v1.9; keep it"),
		C("record_handle_started", "run_id", 6, "step", 2, "handle", 1, "line", "go run ./cmd/devserver"),
		C("record_handle_output", "run_id", 6, "step", 2, "handle", 1, "chunk", "listening on :8080\n"),
	)
	var pin []fixture.Call
	for i, t := range []time.Duration{19*time.Minute + 30*time.Second, 19*time.Minute + 48*time.Second, 19*time.Minute + 55*time.Second, 19*time.Minute + 57*time.Second} {
		pin = append(pin, C("set_time", "table", "run_events", "column", "at", "row_id", ids[i], "value", at(t)))
	}
	pin = append(pin, C("set_time", "table", "agent_queue", "column", "queued_at", "row_id", 1, "value", at(12*time.Minute)),
		C("set_time", "table", "agent_queue", "column", "queued_at", "row_id", 2, "value", at(12*time.Minute)))
	d.foreign(pin...)
	d.refresh()
}

// The live strip says what each running agent of the open tree is doing
// inside the step it has not committed yet, from the stream io-harness's
// Broadcast writes (run_events, put_event); the tree shows the queued
// children, the plan's progress, unread messages and running processes.
func TestLiveStripAndTreeExtras(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.lacks(" now  ")
	liveTree(d)
	d.contains(" now  #7 ✎ model streaming 65 B · 5s", "#6 ⚙ running run go mod tidy · 12s", "#5 ◆ waiting on approval: write CHANGELOG.md · 30s",
		"⧗ queued: worker: write the release notes · no run yet (step 3)", "⧗ queued: worker: update the docs site",
		"#4 ☑1/3 Coordinate", "#6 ⚙1 worker", "#7 ✉1 grandchild")
	// Selecting an agent puts it first in the strip.
	d.press("2", "j")
	if d.m.tree.Selected() != "5" {
		t.Fatalf("selected %s", d.m.tree.Selected())
	}
	d.contains(" now  #5 ◆ waiting on approval")
	// The step commits: the strip says so; the stream's next event moves it on.
	C := fixture.C
	ids := d.foreign(C("put_event", "run_id", 6, "step", 3, "depth", 1, "event", "step", "decision", "ran go mod tidy", "tool_call", "run:{}", "tokens", 900, "changed", true))
	d.foreign(C("set_time", "table", "run_events", "column", "at", "row_id", ids[0], "value", at(19*time.Minute+59*time.Second)))
	d.refresh()
	d.contains("#6 ✓ committed step 3")
	d.lacks("#6 ⚙ running")
	// The child is admitted: its queue row goes, and the tree no longer shows it.
	d.foreign(C("dequeue_agent", "parent_run_id", 4, "step", 3, "goal", "worker: write the release notes"))
	d.refresh()
	d.lacks("worker: write the release notes")
	d.contains("⧗ queued: worker: update the docs site")
	// The grandchild reads its mail: no unread mark.
	d.foreign(C("read_messages", "to_run_id", 7))
	d.refresh()
	d.lacks("✉1")
}

// A store from before the stream (io-harness 0.22: no run_events, no
// queue, no mailbox) shows no strip and no extras, and no error.
func TestNoLiveStripOnAnOldStore(t *testing.T) {
	p := sharedFixture(t, "store-0.22.0/populated.sqlite3")
	d := openDriver(t, p, 120, 40)
	d.lacks(" now  ", "⧗", "not recorded")
	if d.m.problem != "" {
		t.Fatalf("problem: %s", d.m.problem)
	}
}

// The run summary: i on a run (Runs) or an agent (Agents) opens it over
// the panes; it scrolls, and esc or i closes it.
func TestSummaryOverlay(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.press("i") // Runs: the newest live run, selected
	d.contains("Run #4 · summary", "#4 Coordinate the v2.0 release", "workspace  /work/shop",
		"lease      owner ", "generation 1", "renewed 1m ago", "expires in ", "counts     agent: 4 steps, 10.9k tokens · tree: 4 agents, 10 steps, 23k tokens",
		"Tokens · 4 provider calls, 0 failed, 4 reported", "prompt 8,720", "Requests · 2", "approval:3 exec make release && git push --tags (step 5) · open")
	// It scrolls, the panes under it keep their keys to themselves.
	before := d.screen()
	d.press("pgdown")
	if d.screen() == before {
		t.Fatal("pgdown did not scroll the summary")
	}
	if d.m.focus != paneRuns {
		t.Fatalf("a key meant for the summary moved the focus to %v", d.m.focus)
	}
	// A commit while it is open: the counts move with the run model, the
	// facts are read again (at once here; at most once a second live).
	defer func(every time.Duration) { summaryEvery = every }(summaryEvery)
	summaryEvery = 0
	d.press("g")
	w := d.writer()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "tagged v2.0.0", Result: "ok", Tokens: 100}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.contains("counts     agent: 5 steps, 11k tokens", "history    5 checkpoints")
	d.press("esc")
	d.lacks("Run #4 · summary")
	// The Agents pane's selection: the changelog worker, with its retry.
	d.press("2", "j", "i")
	d.contains("Run #5 · summary", "parent     #4 (depth 1)", "Tokens · 5 provider calls, 2 failed, 3 reported")
	d.press("i")
	d.lacks("Run #5 · summary")
}

// The summary of what io-harness 0.29 records about a run: gate failures
// by phase, resumes, memory and the assembler's other events, and for the
// tables 0.29 did not have, that the store does not record them.
func TestSummaryOfTheAggregatesFixture(t *testing.T) {
	p := sharedFixture(t, "store-0.29.0/aggregates.sqlite3")
	d := openDriver(t, p, 120, 60)
	d.press("G") // run 1, the oldest
	d.press("i")
	d.contains("Run #1 · summary", "verified on the first attempt", "no gate failures", "test-command = cargo test --features documents (fact, step 3)",
		"queued     "+store.NotRecorded)
	d.press("esc", "k", "k", "i") // run 3: resumed after a crash, its criterion failed to compile
	d.contains("Run #3 · summary", "1 resume", "resume at step 1: restarted after a crash", "failures by phase: criterion-compile ×1")
	d.press("esc", "k", "i") // run 4
	d.contains("Run #4 · summary", "step 1 served fixture-secondary", "step 1 replan no progress in the last 3 steps", "failures by phase: compile ×1")
}

// The populated fixture's step 4 in the step pane: what the provider
// cited and ran there, its token breakdown, one attempt.
func TestStepDetailShowsProviderTools(t *testing.T) {
	p := sharedFixture(t, "store-0.22.0/populated.sqlite3")
	d := openDriver(t, p, 200, 60)
	pane := ansi.Strip(d.m.RenderPane(int(paneStep), 160, 80))
	for _, want := range []string{"4 Step 4", "── Provider calls (1) · prompt 400 · completion 50 · total 450 · cache read 7 · cache write 3 · reasoning 5 · server tools 1",
		"step 4 anthropic web_search", "step 4 anthropic web_search failed: max_uses_exceeded", "step 4 cited https://example.invalid/one — The first source",
		"“a quoted passage”"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the step pane lacks %q:\n%s", want, pane)
		}
	}
}

// The step pane says what the timeline says: while a step is pending on
// provider retries, a new failed attempt and its retry row reach both the
// timeline's fold and the detail (its attempts are read again).
func TestStepDetailFollowsTheTimeline(t *testing.T) {
	d := newDriver(t, 200, 60)
	d.press("2", "j", "3", "G") // the changelog worker's step 3, pending on a retry
	st, _ := d.m.timeline.Selected()
	if !st.Pending || st.Number != 3 {
		t.Fatalf("selected %+v", st)
	}
	d.contains("… retry 1 after Timeout", "step 3 · not committed yet", "↩ 1 provider retry · 2 provider attempts", "Provider calls (2)")
	w := d.writer()
	ctx := context.Background()
	if err := w.RecordProviderCall(ctx, "5", store.ProviderCall{Step: 3, Attempt: 2, Provider: "anthropic", LatencyMS: 9000, Failure: "Timeout"}); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordRetry(ctx, "5", 3, 2, "Timeout", 2*time.Second, "provider error (Timeout): no response in 9s"); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.contains("… retry 2 after Timeout", "↩ 2 provider retries · 3 provider attempts", "Provider calls (3)", "↩ retry 2 after Timeout in 2s")
	d.lacks("retry 1 after Timeout    ") // the timeline's row says retry 2, and so does the detail's heading
}

// --run N opens N in its tree, selected (not its root).
func TestRunOptionSelectsTheRun(t *testing.T) {
	d := newDriver(t, 120, 40, func(o *Options) { o.Run = "7" })
	if d.m.st.root != "4" || d.m.tree.Selected() != "7" || d.m.timeline.RunID() != "7" {
		t.Fatalf("root %s, selected %s, timeline %s", d.m.st.root, d.m.tree.Selected(), d.m.timeline.RunID())
	}
	d.contains("3 Timeline · #7 grandchild")
}

// "updated" is the store's own last write: the fixture's newest stamp is a
// minute old, whatever vigil's open did to the files; a commit seen while
// watching is now.
func TestUpdatedIsTheStoresLastWrite(t *testing.T) {
	d := newDriver(t, 120, 40)
	d.contains("updated 1m ago")
	d.refresh() // nothing written: a refresh changes nothing
	d.contains("updated 1m ago")
	w := d.writer()
	if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 5, Decision: "tagged v2.0.0", Result: "ok", Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	d.refresh()
	d.contains("updated 0s ago")
}

// A run that finished without committing a step says so.
func TestFinishedRunWithNoSteps(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := w.StartRun(ctx, "answer a question", "/work/shop")
	if err := w.FinishRun(ctx, id, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	w.Close()
	d := openDriver(t, path, 120, 40, func(o *Options) { o.Run = id })
	d.contains("no steps: the run committed none")
	d.lacks("no steps yet")
}

// Golden frames of the new views at the three sizes the README names: the
// live tree with its strip and extras, and the summary over it.
func TestGoldenFacts(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 32}, {200, 60}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		t.Run("live/"+name, func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			fixedOwner(d)
			liveTree(d)
			d.press("2")
			golden.RequireEqual(t, d.screen())
		})
		t.Run("summary/"+name, func(t *testing.T) {
			d := newDriver(t, size[0], size[1])
			fixedOwner(d)
			liveTree(d)
			d.press("i")
			golden.RequireEqual(t, d.screen())
		})
	}
}

// fixedOwner gives the live tree's lease an owner that is the same on
// every machine: one that names no pid, which io-harness and vigil read as
// alive (frames show the owner).
func fixedOwner(d *driver) {
	d.t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: d.path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
	if err != nil {
		d.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE run_leases SET owner = 'release-bot-1'"); err != nil {
		d.t.Fatal(err)
	}
	d.refresh()
}

// sharedFixture copies one of the io-harness release fixtures
// (testkit.IOHarnessFixtures) into a temporary directory.
func sharedFixture(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join(testkit.IOHarnessFixtures(t), rel)
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			if suffix == "" {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
