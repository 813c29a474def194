package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The io-harness lifecycles after a run's first life, in the explorer's
// model: the state it shows, the counts, and whether a request can be
// decided. The stores are written in internal/testkit/fixture the way the
// io-harness function named there writes them.

func lifecycleDriver(t *testing.T, build func(string) (*fixture.Lifecycle, error)) (*driver, *fixture.Lifecycle) {
	t.Helper()
	lc, err := build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	patientReads(t)
	return openDriver(t, lc.Path, 160, 45), lc
}

func (d *driver) stateOf(id string) store.State {
	d.t.Helper()
	if _, ok := d.m.st.model.Run(id); !ok {
		d.t.Fatalf("no run %s", id)
	}
	return d.m.st.model.State(id, d.clock)
}

func (d *driver) runOf(id string) store.Run {
	d.t.Helper()
	r, ok := d.m.st.model.Run(id)
	if !ok {
		d.t.Fatalf("no run %s", id)
	}
	return r
}

// patientReads lets the driver wait longer for a command before taking it
// for a timer: these tests read stores, and a loaded machine under -race can
// take more than the default for one read.
func patientReads(t *testing.T) {
	old := cmdTimeout
	cmdTimeout = 3 * time.Second
	t.Cleanup(func() { cmdTimeout = old })
}

func (d *driver) item(key string) (delivery store.Delivery, why string) {
	d.t.Helper()
	d.press("6")
	selectRequest(d, key)
	it, _ := d.m.approvals.Current()
	return it.Delivery, it.Why
}

// resume (src/run.rs): the step-capped run a resume drives again is live
// and waiting, counted from its steps, and its approval lands.
func TestTUIResumedAfterLimit(t *testing.T) {
	d, lc := lifecycleDriver(t, fixture.ResumedAfterLimit)
	run := lc.IDs["run"]
	if st := d.stateOf(run); st != store.StateWaiting {
		t.Fatalf("state %v, want waiting", st)
	}
	r := d.runOf(run)
	if !r.StatsKnown || r.Steps != 5 || r.Tokens != 7000 || r.Summary != nil {
		t.Fatalf("run counts %d steps, %d tokens (known %v, summary %v); want 5, 7000", r.Steps, r.Tokens, r.StatsKnown, r.Summary)
	}
	if dl, why := d.item("approval " + lc.IDs["approval"]); dl != store.Deliverable {
		t.Fatalf("delivery %v (%s)", dl, why)
	}
	d.advance(time.Second)
	d.press("a", "y")
	d.contains("✓ approved: approval " + lc.IDs["approval"])
}

// The same resume happening while vigil watches: the run had finished when
// vigil loaded it; the resume's lease, steps and approval come in through a
// refresh, and the run is live again, recounted from its steps.
func TestTUIResumeArrivesWhileWatching(t *testing.T) {
	path, w := createdStore(t, "runs.sqlite3")
	ctx := context.Background()
	run, _ := w.StartRun(ctx, "within 2 steps", "/w")
	w.AcquireLease(ctx, run, time.Hour)
	for n := 1; n <= 2; n++ {
		w.CheckpointStep(ctx, run, harness.StepRecord{Step: n, Decision: "read", Result: "r", Tokens: 100})
	}
	w.FinishRun(ctx, run, store.OutcomeStepCapReached)
	w.ReleaseLease(ctx, run)

	patientReads(t)
	d := openDriver(t, path, 160, 45)
	if st := d.stateOf(run); st != store.StateFinished {
		t.Fatalf("before the resume: %v", st)
	}
	// resume_with_observed: the lease, the markers, a step, an approval.
	w.AcquireLease(ctx, run, time.Hour)
	w.RecordCheckpointEvent(ctx, run, 3, "resume", "resuming at step 3, 2 committed step(s) skipped")
	w.RecordCheckpointEvent(ctx, run, 1, "skipped", "")
	w.RecordCheckpointEvent(ctx, run, 2, "skipped", "")
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 3, Decision: "read more", Result: "r", Tokens: 300})
	req, _ := w.PutPending(ctx, run, 4, "write", "out.txt", nil)
	d.refresh()
	if st := d.stateOf(run); st != store.StateWaiting {
		t.Fatalf("after the resume: %v", st)
	}
	r := d.runOf(run)
	if !r.StatsKnown || r.Steps != 3 || r.Tokens != 500 {
		t.Fatalf("counts after the resume: %d steps, %d tokens (known %v); want 3, 500", r.Steps, r.Tokens, r.StatsKnown)
	}
	if dl, why := d.item("approval " + req); dl != store.Deliverable {
		t.Fatalf("delivery %v (%s)", dl, why)
	}
	// More steps are counted as they come (the summary no longer holds them).
	w.ResolvePending(ctx, req, store.VerdictApprove)
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 4, Decision: "wrote out.txt", Result: "r", Tokens: 50})
	d.refresh()
	if r := d.runOf(run); r.Steps != 4 || r.Tokens != 550 {
		t.Errorf("counts after step 4: %d steps, %d tokens", r.Steps, r.Tokens)
	}
}

// resume_with_decision (src/run.rs): waiting, the new request decidable; the
// run still deferred stays paused and refused, with the reason on screen.
func TestTUIResumedWithDecision(t *testing.T) {
	d, lc := lifecycleDriver(t, fixture.ResumedWithDecision)
	if st := d.stateOf(lc.IDs["resumed"]); st != store.StateWaiting {
		t.Errorf("resumed run: %v", st)
	}
	if st := d.stateOf(lc.IDs["deferred"]); st != store.StatePaused {
		t.Errorf("deferred run: %v", st)
	}
	if dl, why := d.item("approval " + lc.IDs["deferredReq"]); dl != store.Deferred || !strings.Contains(why, "paused") {
		t.Errorf("deferred request: %v (%s)", dl, why)
	}
	d.advance(time.Second)
	d.press("a")
	if d.m.approvals.Capturing() {
		t.Fatal("the deferred request opened a confirmation")
	}
	d.contains("is paused (awaiting_approval)")
	dl, why := d.item("approval " + lc.IDs["resumedNow"])
	if dl != store.DeliveryUnknown || !strings.Contains(why, "resume_with_decision") {
		t.Fatalf("new request: %v (%s)", dl, why)
	}
	d.advance(time.Second)
	d.press("a", "y")
	d.contains("✓ approved: approval " + lc.IDs["resumedNow"])
}

// tests/attach.rs F7 and the crash resume: one request waits; the orphan is
// listed as orphaned, with the reason, and cannot be decided.
func TestTUIOrphaned(t *testing.T) {
	d, lc := lifecycleDriver(t, fixture.Orphaned)
	if n := d.m.st.model.Pending(); n != 1 {
		t.Errorf("%d waiting, want 1", n)
	}
	d.contains("◆ 1 waiting")
	d.press("6")
	d.contains("1 waiting · 1 orphaned")
	dl, why := d.item("approval " + lc.IDs["orphan"])
	if dl != store.Orphaned || !strings.Contains(why, "asked again in approval:"+lc.IDs["live"]) {
		t.Fatalf("orphan: %v (%s)", dl, why)
	}
	d.advance(time.Second)
	d.press("a")
	if d.m.approvals.Capturing() {
		t.Fatal("an orphan opened a confirmation")
	}
	d.contains("asked again in approval:" + lc.IDs["live"])
	if q := mustRequest(t, d.m.src, store.RequestKey{Kind: store.Approval, ID: lc.IDs["orphan"]}); q.Resolved {
		t.Fatal("the orphan was decided")
	}
	if dl, why := d.item("approval " + lc.IDs["live"]); dl != store.Deliverable {
		t.Fatalf("live: %v (%s)", dl, why)
	}
}

// recovery_pause (src/run/outcome.rs): waiting on recovery, with the tool
// call on the status bar, not crashed.
func TestTUIAwaitingRecovery(t *testing.T) {
	d, lc := lifecycleDriver(t, fixture.AwaitingRecovery)
	if st := d.stateOf(lc.IDs["run"]); st != store.StateRecovery {
		t.Fatalf("state %v, want recovery", st)
	}
	d.contains("recovery", "waits on recovery: charge_card at step 2")
	d.lacks("crashed", "driver gone")
}
