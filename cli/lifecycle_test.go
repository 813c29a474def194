package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// The io-harness lifecycles after a run's first life, through the CLI: the
// state and counts `runs --json` and `show --json` print, each request's
// delivery, and what approve and deny do (docs/cli.md's exit codes). The
// stores are written in internal/testkit/fixture the way the io-harness function
// named there writes them.

func lifecycleStore(t *testing.T, build func(string) (*fixture.Lifecycle, error)) *fixture.Lifecycle {
	t.Helper()
	lc, err := build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

func runsJSON(t *testing.T, h *harness, path string) jsonRuns {
	t.Helper()
	r := h.run("runs", "--json", "--store", path)
	r.wantCode(t, 0)
	var doc jsonRuns
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func (d jsonRuns) run(t *testing.T, id string) jsonRun {
	t.Helper()
	for _, r := range d.Runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no run %s in %+v", id, d.Runs)
	return jsonRun{}
}

func (d jsonRuns) request(t *testing.T, key string) jsonRequest {
	t.Helper()
	for _, q := range d.Requests {
		if q.Key == key {
			return q
		}
	}
	t.Fatalf("no request %s", key)
	return jsonRequest{}
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// resume (src/run.rs): a step-capped run driven again under a live lease.
func TestCLIResumedAfterLimit(t *testing.T) {
	t.Parallel()
	lc := lifecycleStore(t, fixture.ResumedAfterLimit)
	h := newHarness(t)
	doc := runsJSON(t, h, lc.Path)
	r := doc.run(t, lc.IDs["run"])
	if r.State != "waiting" || deref(r.Status) != "completed" || deref(r.Outcome) != "step_cap_reached" || r.Liveness != "live" {
		t.Errorf("run: state %s, status %v, outcome %v, liveness %s", r.State, deref(r.Status), deref(r.Outcome), r.Liveness)
	}
	if deref(r.AgentSteps) != 5 || deref(r.AgentTokens) != 7000 || deref(r.TreeSteps) != 5 || r.FinishedAt != nil || r.Success != nil || r.AgentWait != 1 || r.TreeWait != 1 {
		t.Errorf("counts: steps %v tokens %v tree steps %v finished %v success %v waiting %d/%d (the old summary: 3 steps)",
			deref(r.AgentSteps), deref(r.AgentTokens), deref(r.TreeSteps), r.FinishedAt, r.Success, r.AgentWait, r.TreeWait)
	}
	key := "approval:" + lc.IDs["approval"]
	if q := doc.request(t, key); q.Delivery != "deliverable" || q.DeliveryReason != nil {
		t.Errorf("request: %s (%v)", q.Delivery, deref(q.DeliveryReason))
	}
	sh := h.run("show", lc.IDs["run"], "--json", "--store", lc.Path)
	sh.wantCode(t, 0)
	var show jsonShow
	if err := json.Unmarshal([]byte(sh.stdout), &show); err != nil {
		t.Fatal(err)
	}
	if len(show.Steps) != 5 || show.Run.State != "waiting" || len(show.Requests) != 1 {
		t.Errorf("show: %d steps, state %s, %d requests", len(show.Steps), show.Run.State, len(show.Requests))
	}
	a := h.run("approve", key, "--store", lc.Path)
	a.wantCode(t, 0)
	contains(t, a.stdout, "approved "+key+": write src/lib.rs (run "+lc.IDs["run"]+", step 6)")
}

// resume_with_decision (src/run.rs): no lease, status still paused; the new
// request is unknown (deliverable if its driver still polls), the
// still-deferred run's request is refused.
func TestCLIResumedWithDecision(t *testing.T) {
	t.Parallel()
	lc := lifecycleStore(t, fixture.ResumedWithDecision)
	h := newHarness(t)
	doc := runsJSON(t, h, lc.Path)
	resumed, deferred := doc.run(t, lc.IDs["resumed"]), doc.run(t, lc.IDs["deferred"])
	if resumed.State != "waiting" || deref(resumed.Status) != "paused" || resumed.AgentWait != 1 {
		t.Errorf("resumed: state %s status %v waiting %d", resumed.State, deref(resumed.Status), resumed.AgentWait)
	}
	if deferred.State != "paused" || deferred.AgentWait != 1 {
		t.Errorf("deferred: state %s waiting %d", deferred.State, deferred.AgentWait)
	}
	now := doc.request(t, "approval:"+lc.IDs["resumedNow"])
	if now.Delivery != "unknown" || !strings.Contains(deref(now.DeliveryReason), "resume_with_decision") {
		t.Errorf("new request: %s (%s)", now.Delivery, deref(now.DeliveryReason))
	}
	still := doc.request(t, "approval:"+lc.IDs["deferredReq"])
	if still.Delivery != "deferred" {
		t.Errorf("deferred request: %s (%s)", still.Delivery, deref(still.DeliveryReason))
	}
	r := h.run("approve", "approval:"+lc.IDs["deferredReq"], "--store", lc.Path)
	r.wantCode(t, 3)
	r.oneLine(t, "approval:"+lc.IDs["deferredReq"]+" not decided: run "+lc.IDs["deferred"]+" is paused (awaiting_approval)")
	r = h.run("deny", "approval:"+lc.IDs["resumedNow"], "--store", lc.Path)
	r.wantCode(t, 0)
	contains(t, r.stdout, "denied approval:"+lc.IDs["resumedNow"]+": exec make deploy")
}

// tests/attach.rs F7 and the crash resume: the orphan is listed, not
// counted as waiting, and refused in one line; the row the resumed driver
// polls is decided.
func TestCLIOrphaned(t *testing.T) {
	t.Parallel()
	lc := lifecycleStore(t, fixture.Orphaned)
	h := newHarness(t)
	doc := runsJSON(t, h, lc.Path)
	run := doc.run(t, lc.IDs["run"])
	if run.State != "waiting" || run.AgentWait != 1 || run.TreeWait != 1 {
		t.Errorf("run: state %s, waiting %d/%d (two undecided rows, one polled)", run.State, run.AgentWait, run.TreeWait)
	}
	orphan, live := doc.request(t, "approval:"+lc.IDs["orphan"]), doc.request(t, "approval:"+lc.IDs["live"])
	if orphan.Delivery != "orphaned" || !strings.Contains(deref(orphan.DeliveryReason), "asked again in approval:"+lc.IDs["live"]) {
		t.Errorf("orphan: %s (%s)", orphan.Delivery, deref(orphan.DeliveryReason))
	}
	if live.Delivery != "deliverable" {
		t.Errorf("live: %s (%s)", live.Delivery, deref(live.DeliveryReason))
	}
	r := h.run("approve", "approval:"+lc.IDs["orphan"], "--store", lc.Path)
	r.wantCode(t, 3)
	r.oneLine(t, "approval:"+lc.IDs["orphan"]+" not decided: run "+lc.IDs["run"]+" asked again in approval:"+lc.IDs["live"])
	r = h.run("approve", "approval:"+lc.IDs["live"], "--store", lc.Path)
	r.wantCode(t, 0)
	// The orphan stays refused once the live one is decided.
	r = h.run("deny", lc.IDs["orphan"], "--store", lc.Path)
	r.wantCode(t, 3)
}

// recovery_pause (src/run/outcome.rs): waiting on a recovery decision, with
// the tool call, in runs, show and show --json.
func TestCLIAwaitingRecovery(t *testing.T) {
	t.Parallel()
	lc := lifecycleStore(t, fixture.AwaitingRecovery)
	h := newHarness(t)
	doc := runsJSON(t, h, lc.Path)
	r := doc.run(t, lc.IDs["run"])
	if r.State != "recovery" || r.Liveness != "dead" || r.Recovery == nil || r.Recovery.Tool != "charge_card" || r.Recovery.Step != 2 ||
		r.Recovery.AttemptID != lc.IDs["attempt"] || r.Recovery.StartedAt == nil {
		t.Errorf("run: state %s liveness %s recovery %+v", r.State, r.Liveness, r.Recovery)
	}
	txt := h.run("show", lc.IDs["run"], "--store", lc.Path)
	txt.wantCode(t, 0)
	contains(t, txt.stdout, "state      recovery", "recovery   tool call charge_card at step 2 (attempt "+lc.IDs["attempt"])
	tbl := h.run("runs", "--store", lc.Path)
	tbl.wantCode(t, 0)
	contains(t, tbl.stdout, "recovery")
}

// tail follows the resumed run: its old ending is not the end, and its new
// one is (resume, then finish_run's INSERT OR REPLACE of the summary).
func TestCLITailFollowsResumedRun(t *testing.T) {
	t.Parallel()
	lc := lifecycleStore(t, fixture.ResumedAfterLimit)
	run := lc.IDs["run"]
	tl := startTail(t, "tail", run, "--store", lc.Path, "--poll", "20ms")
	tl.waitLine(t, "#"+run+" step 5  wrote src/p4.rs  →  [wrote src/p4.rs]  (2500 tokens)")
	select {
	case code := <-tl.done:
		tl.done <- code
		t.Fatalf("tail stopped at the old ending (exit %d):\n%s", code, tl.out.String())
	case <-time.After(300 * time.Millisecond):
	}
	w := writer(t, lc.Path)
	ctx := context.Background()
	if _, err := w.ResolvePending(ctx, lc.IDs["approval"], store.VerdictApprove); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, run, twin.StepRecord{Step: 6, Decision: "wrote src/lib.rs", Result: "ok", Tokens: 800}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	if code := tl.exit(t); code != 0 {
		t.Fatalf("exit %d; stderr %q", code, tl.err.String())
	}
	if out := tl.out.String(); !strings.Contains(out, "#"+run+" finished: success (6 steps, 7.8k tokens") {
		t.Fatalf("last line:\n%s", out)
	}
}
