package ioharness_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The lifecycle stores are written in internal/testkit/fixture, each the way the
// io-harness function named there writes it; these tests read them through
// the store layer. The CLI and explorer tests read the same stores.

func openRO(t *testing.T, path string) *ioharness.Store {
	t.Helper()
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openRW(t *testing.T, path string) *ioharness.Store {
	t.Helper()
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func runByID(t *testing.T, s *ioharness.Store, id string) store.Run {
	t.Helper()
	runs, err := s.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no run %s", id)
	return store.Run{}
}

func request(t *testing.T, s *ioharness.Store, kind store.RequestKind, id string) store.Request {
	t.Helper()
	q, err := s.Request(context.Background(), store.RequestKey{Kind: kind, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func lifecycle(t *testing.T, build func(string) (*fixture.Lifecycle, error)) *fixture.Lifecycle {
	t.Helper()
	lc, err := build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

func sqlite3(t *testing.T, path, q string) string {
	t.Helper()
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	out, err := exec.Command("sqlite3", path, q).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %q: %v: %s", q, err, out)
	}
	return strings.TrimSpace(string(out))
}

// resume (src/run.rs) re-drives a run whose outcome terminal_outcome
// (src/run/outcome.rs) does not call final, under a live lease, with the
// status left completed and the first ending's run_outcomes row in place:
// the run is live again, counted from its steps, and its new approval is
// deliverable.
func TestResumedAfterLimitIsLive(t *testing.T) {
	lc := lifecycle(t, fixture.ResumedAfterLimit)
	run, req := lc.IDs["run"], lc.IDs["approval"]
	// What io-harness left, read by a foreign reader: the status and the
	// first ending's summary are as finish_run wrote them.
	if got := sqlite3(t, lc.Path, "SELECT r.status, r.outcome, o.steps FROM runs r JOIN run_outcomes o ON o.run_id = r.id WHERE r.id = "+run); got != "completed|step_cap_reached|3" {
		t.Fatalf("the store says %q", got)
	}
	s := openRW(t, lc.Path)
	ctx := context.Background()
	r := runByID(t, s, run)
	if !r.Resumable || !r.Reopened() || r.Summary != nil || r.StatsKnown || r.Ended() {
		t.Fatalf("run = %+v: want reopened, no summary, counts unknown", r)
	}
	st, err := s.RunStats(ctx, []string{run})
	if err != nil {
		t.Fatal(err)
	}
	if st[run].Steps != 5 || st[run].Tokens != 7000 {
		t.Errorf("counted %d steps, %d tokens; want 5, 7000 (the summary says 3)", st[run].Steps, st[run].Tokens)
	}
	if got := store.StateOf(r, r.Lease, s.RecordsLeases(), true, time.Now()); got != store.StateWaiting {
		t.Errorf("state %v, want waiting", got)
	}
	if got := store.StateOf(r, r.Lease, s.RecordsLeases(), false, time.Now()); got != store.StateRunning {
		t.Errorf("state %v without the request, want running", got)
	}
	q := request(t, s, store.Approval, req)
	if q.Standing != store.StandingOpen {
		t.Errorf("standing %v (%s), want open", q.Standing, q.StandingReason)
	}
	if d, why := s.Classify(q, r, r.Lease, time.Now()); d != store.Deliverable {
		t.Errorf("delivery %v (%s), want deliverable", d, why)
	}
	res, err := s.Decide(ctx, store.Decision{Key: q.Key(), Verdict: store.VerdictApprove})
	if err != nil || !res.Won {
		t.Fatalf("decide: %+v, %v", res, err)
	}
	if got := sqlite3(t, lc.Path, "SELECT resolved FROM pending_approvals WHERE id = "+req); got != "approve" {
		t.Errorf("row says %q", got)
	}
}

// The same resume seen while tailing: the run had finished when the
// cursor was taken; the resume's lease, steps and request come through
// Changes, the run is told again without its old summary, and when it ends
// again (finish_run's INSERT OR REPLACE) it is told with the new one.
func TestResumedAfterLimitIsTailed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	run, _ := w.StartRun(ctx, "within 1 step", "/w")
	w.AcquireLease(ctx, run, time.Hour)
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "read a", Result: "r", Tokens: 10})
	w.FinishRun(ctx, run, store.OutcomeStepCapReached)
	w.ReleaseLease(ctx, run)

	r := openRW(t, path)
	c, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if x := runByID(t, r, run); x.Summary == nil || !x.Ended() {
		t.Fatalf("before the resume the run is finished: %+v", x)
	}
	// resume_with_observed: acquire_lease, record_resume_markers, the loop.
	w.AcquireLease(ctx, run, time.Hour)
	w.RecordCheckpointEvent(ctx, run, 2, "resume", "resuming at step 2, 1 committed step(s) skipped")
	w.RecordCheckpointEvent(ctx, run, 1, "skipped", "")
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 2, Decision: "read b", Result: "r", Tokens: 20})
	req, _ := w.PutPending(ctx, run, 3, "write", "b", ptr("B"))
	ch, c, err := r.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var told *store.Run
	for i := range ch.Runs {
		if ch.Runs[i].ID == run {
			told = &ch.Runs[i]
		}
	}
	if told == nil || !told.Reopened() || told.Summary != nil {
		t.Fatalf("the reopened run is not told again: %+v", ch.Runs)
	}
	if len(ch.Steps) != 1 || len(ch.Requests) != 1 || ch.Requests[0].ID != req || ch.Requests[0].Standing != store.StandingOpen {
		t.Fatalf("steps %+v, requests %+v", ch.Steps, ch.Requests)
	}
	// It ends again.
	w.ResolvePending(ctx, req, store.VerdictApprove)
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 3, Decision: "wrote b", Result: "r", Tokens: 30})
	w.FinishRun(ctx, run, store.OutcomeSuccess)
	w.ReleaseLease(ctx, run)
	ch, _, err = r.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var last *store.Run
	for i := range ch.Runs {
		if ch.Runs[i].ID == run {
			last = &ch.Runs[i]
		}
	}
	if last == nil || last.Outcome != store.OutcomeSuccess || last.Summary == nil || last.Summary.Steps != 3 || !last.Ended() {
		t.Fatalf("the second ending is not told: %+v", last)
	}
}

// resume_with_decision (src/run.rs) takes no lease: after it resolves the
// deferred request and records decision/approve/resumed:<id>, the run's
// status stays paused while it drives on and asks again. Its new request
// is not a deferred one; a run still deferred keeps its refusal.
func TestResumedWithDecisionIsNotDeferred(t *testing.T) {
	lc := lifecycle(t, fixture.ResumedWithDecision)
	s := openRW(t, lc.Path)
	ctx := context.Background()
	resumed, deferred := runByID(t, s, lc.IDs["resumed"]), runByID(t, s, lc.IDs["deferred"])
	if resumed.Status != store.StatusPaused || !resumed.LeaselessDriver || deferred.LeaselessDriver {
		t.Fatalf("resumed %+v\ndeferred %+v", resumed, deferred)
	}
	now := time.Now()
	if got := store.StateOf(resumed, nil, true, true, now); got != store.StateWaiting {
		t.Errorf("resumed run state %v, want waiting", got)
	}
	if got := store.StateOf(deferred, nil, true, true, now); got != store.StatePaused {
		t.Errorf("deferred run state %v, want paused", got)
	}
	if q := request(t, s, store.Approval, lc.IDs["resumedFirst"]); !q.Resolved || q.Decision != "approve" {
		t.Fatalf("the resumed request: %+v", q)
	}
	now2 := request(t, s, store.Approval, lc.IDs["resumedNow"])
	if now2.Standing != store.StandingOpen {
		t.Errorf("new request standing %v (%s)", now2.Standing, now2.StandingReason)
	}
	d, why := s.Classify(now2, resumed, nil, now)
	if d != store.DeliveryUnknown || !strings.Contains(why, "resume_with_decision") || !strings.Contains(why, "no lease") {
		t.Errorf("new request: %v (%s), want unknown with the reason", d, why)
	}
	still := request(t, s, store.Approval, lc.IDs["deferredReq"])
	if still.Standing != store.StandingParked {
		t.Errorf("deferred request standing %v (%s), want parked", still.Standing, still.StandingReason)
	}
	if d, why := s.Classify(still, deferred, nil, now); d != store.Deferred || !strings.Contains(why, "paused (awaiting_approval)") {
		t.Errorf("deferred request: %v (%s)", d, why)
	}
	_, err := s.Decide(ctx, store.Decision{Key: still.Key(), Verdict: store.VerdictApprove})
	var refused *store.RefusedError
	if !errors.As(err, &refused) || refused.Delivery != store.Deferred {
		t.Fatalf("deciding the deferred request: %v", err)
	}
	res, err := s.Decide(ctx, store.Decision{Key: now2.Key(), Verdict: store.VerdictDeny})
	if err != nil || !res.Won {
		t.Fatalf("deciding the resumed run's request: %+v, %v", res, err)
	}
}

// tests/attach.rs F7: a killed owner leaves its polled row unresolved, and
// the crash resume replays the step and asks in a new row. Only the new row
// is polled; the old one is an orphan, shown and refused.
func TestOrphanedRequestIsRefused(t *testing.T) {
	lc := lifecycle(t, fixture.Orphaned)
	s := openRW(t, lc.Path)
	ctx := context.Background()
	r := runByID(t, s, lc.IDs["run"])
	orphan, live := request(t, s, store.Approval, lc.IDs["orphan"]), request(t, s, store.Approval, lc.IDs["live"])
	if orphan.Standing != store.StandingOrphaned || orphan.Waits() || !strings.Contains(orphan.StandingReason, "asked again in approval:"+live.ID) {
		t.Fatalf("orphan: %v %q", orphan.Standing, orphan.StandingReason)
	}
	if live.Standing != store.StandingOpen || !live.Waits() {
		t.Fatalf("live: %v %q", live.Standing, live.StandingReason)
	}
	now := time.Now()
	if d, _ := s.Classify(orphan, r, r.Lease, now); d != store.Orphaned {
		t.Errorf("orphan delivery %v", d)
	}
	if d, why := s.Classify(live, r, r.Lease, now); d != store.Deliverable {
		t.Errorf("live delivery %v (%s)", d, why)
	}
	_, err := s.Decide(ctx, store.Decision{Key: orphan.Key(), Verdict: store.VerdictApprove})
	var refused *store.RefusedError
	if !errors.As(err, &refused) || refused.Delivery != store.Orphaned {
		t.Fatalf("deciding the orphan: %v", err)
	}
	if got := sqlite3(t, lc.Path, "SELECT COALESCE(resolved, 'NULL') FROM pending_approvals WHERE id = "+orphan.ID); got != "NULL" {
		t.Fatalf("the orphan was written: %q", got)
	}
	// The driver's own approver answers the live row and the step commits:
	// the orphan stays an orphan, for the other reason now.
	w, err := harness.OpenWriter(lc.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.ResolvePending(ctx, live.ID, store.VerdictApprove)
	w.CheckpointStep(ctx, r.ID, harness.StepRecord{Step: live.Step, Decision: "wrote keys/deploy.pub", Result: "ok", Tokens: 900})
	orphan = request(t, s, store.Approval, orphan.ID)
	if orphan.Standing != store.StandingOrphaned {
		t.Fatalf("orphan after the step committed: %v %q", orphan.Standing, orphan.StandingReason)
	}
}

// A driver that dies inside a call it cannot replay leaves an open
// tool_attempts row (open_attempt, src/state/trace.rs), and resume stops at
// recovery_pause until resume_with_recovery: waiting on recovery, not
// crashed. Deciding it (resolve_attempt) is told through Changes.
func TestAwaitingRecovery(t *testing.T) {
	lc := lifecycle(t, fixture.AwaitingRecovery)
	s := openRW(t, lc.Path)
	ctx := context.Background()
	r := runByID(t, s, lc.IDs["run"])
	if r.Recovery == nil || r.Recovery.Tool != "charge_card" || r.Recovery.Step != 2 || r.Recovery.AttemptID != lc.IDs["attempt"] || r.Recovery.StartedAt.IsZero() {
		t.Fatalf("recovery = %+v", r.Recovery)
	}
	now := time.Now()
	if l := store.LivenessOf(r.Lease, true, now); l != store.Dead {
		t.Fatalf("liveness %v, want dead (the killed driver's lease)", l)
	}
	if got := store.StateOf(r, r.Lease, true, false, now); got != store.StateRecovery {
		t.Errorf("state %v, want recovery", got)
	}
	c, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(lc.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// resume_with_recovery(Retry): resolve_attempt, then resume_with_observed.
	if err := w.ResolveAttempt(ctx, lc.IDs["attempt"], "retry"); err != nil {
		t.Fatal(err)
	}
	ch, _, err := s.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != r.ID || ch.Runs[0].Recovery != nil {
		t.Fatalf("the decided attempt is not told: %+v", ch.Runs)
	}
	if got := store.StateOf(ch.Runs[0], ch.Runs[0].Lease, true, false, now); got != store.StateCrashed {
		t.Errorf("after the decision, until a resume takes it: %v, want crashed", got)
	}
}

// A run's rows 30 000 rows apart, and a resume's low-step rows written
// late: the trace is byte for byte what io-harness's canonical_trace
// (src/state/trace.rs) builds, here computed by Python's sqlite3 with its
// two queries (steps ORDER BY step, id; context_events ORDER BY id); the
// timeline folds the far retry under step 1; a step's detail and the run's
// policy and checkpoint events have every row.
func TestFarApartRowsAreAllRead(t *testing.T) {
	lc := lifecycle(t, func(dir string) (*fixture.Lifecycle, error) { return fixture.FarApart(dir, 30_000) })
	run := lc.IDs["run"]
	// The far retry really is far: 30 000 rows of another run lie between it
	// and step 1's commit.
	if got := sqlite3(t, lc.Path, "SELECT (SELECT MIN(id) FROM steps WHERE run_id = "+run+" AND decision NOT LIKE 'retry%') - (SELECT MIN(id) FROM steps WHERE run_id = "+run+")"); got != "30001" {
		t.Fatalf("retry to commit: %s rows", got)
	}
	s := openRO(t, lc.Path)
	ctx := context.Background()
	got, err := s.CanonicalTrace(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	want := pythonTrace(t, lc.Path, run)
	if got != want {
		t.Fatalf("trace differs from canonical_trace's:\n--- vigil\n%s\n--- python\n%s", got, want)
	}
	steps, err := s.Steps(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 || steps[0].Number != 1 || len(steps[0].Retries) != 1 || !strings.HasPrefix(steps[0].Retries[0].Decision, "retry 1 after") {
		t.Fatalf("steps = %+v", steps)
	}
	d, err := s.StepDetail(ctx, run, steps[0].RowID)
	if err != nil {
		t.Fatal(err)
	}
	// The first step's detail carries the events of step 0 too (the
	// provider's net check, and the resume's, written late), each at its
	// step: step 0 never gets a row of its own.
	if len(d.Policy) != 3 || d.Policy[0].Step != 0 || d.Policy[1].Step != 0 ||
		d.Policy[2].Step != 1 || d.Policy[2].Kind != store.PolicyRefusal || d.Policy[2].Target != ".env" {
		t.Errorf("step 1 policy = %+v", d.Policy)
	}
	pol, err := s.PolicyEvents(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sqlite3(t, lc.Path, "SELECT id FROM policy_events WHERE run_id = "+run), "\n") + 1; len(pol) != n || n != 3 {
		t.Errorf("%d policy events, the table has %d for the run", len(pol), n)
	}
	evs, err := s.Events(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, e := range evs {
		if e.Source == "checkpoint" && e.Kind == "skipped" {
			skipped++
		}
	}
	if n := sqlite3(t, lc.Path, "SELECT COUNT(*) FROM checkpoint_events WHERE run_id = "+run); skipped != 3 || strings.TrimSpace(n) != strconv.Itoa(countSource(evs, "checkpoint")) {
		t.Errorf("%d skipped markers of 3; %d checkpoint events, the table has %s", skipped, countSource(evs, "checkpoint"), n)
	}
}

func countSource(evs []ioharness.Event, src string) int {
	n := 0
	for _, e := range evs {
		if e.Source == src {
			n++
		}
	}
	return n
}

// pythonTrace builds canonical_trace's text with Python's sqlite3: the
// same two queries, the same line format, numbers as Rust prints the u32
// step and u64 tokens it reads them into.
func pythonTrace(t *testing.T, path, run string) string {
	t.Helper()
	py := testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	script := `
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
run = int(sys.argv[2])
out = []
for step, decision, result, prompt, tool_call, tokens in db.execute(
        "SELECT step, decision, result, prompt, tool_call, tokens FROM steps WHERE run_id = ? ORDER BY step ASC, id ASC", (run,)):
    out.append("step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n" % (step % 2**32, tokens % 2**64, decision, tool_call, prompt, result))
for step, kind, detail in db.execute("SELECT step, kind, detail FROM context_events WHERE run_id = ? ORDER BY id ASC", (run,)):
    out.append("context %d | %s | %s\n" % (step % 2**32, kind, detail if detail is not None else ""))
sys.stdout.buffer.write("".join(out).encode("utf-8"))
`
	out, err := exec.Command(py, "-c", script, path, run).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	return string(out)
}

// A store io-harness upgrades while vigil reads it: the 0.29 store has no
// run_leases; once a newer io-harness's open adds it (here OpenWriter, which
// migrates as Store::open does), the reader learns the table from PRAGMA
// schema_version and tells the leases — and run 4, stopped at its step cap,
// holding one again, is reopened.
func TestSchemaLearnedAgainAfterUpgrade(t *testing.T) {
	src := filepath.Join(testkit.IOHarnessFixtures(t), "store-0.29.0", "aggregates.sqlite3")
	dir := t.TempDir()
	path := filepath.Join(dir, "aggregates.sqlite3")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			if suffix == "" {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(path+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	r := openRO(t, path)
	if r.RecordsLeases() {
		t.Fatal("a 0.29 store records leases?")
	}
	c, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AcquireLease(ctx, "4", time.Hour); err != nil {
		t.Fatal(err)
	}
	ch, _, err := r.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !r.RecordsLeases() || !ch.LeasesChanged || ch.Leases["4"].Owner != w.Owner() {
		t.Fatalf("records leases %v, changes %+v", r.RecordsLeases(), ch)
	}
	var four *store.Run
	for i := range ch.Runs {
		if ch.Runs[i].ID == "4" {
			four = &ch.Runs[i]
		}
	}
	if four == nil || !four.Reopened() || four.Outcome != store.OutcomeStepCapReached {
		t.Fatalf("run 4 is not told reopened: %+v", ch.Runs)
	}
}

func ptr[T any](v T) *T { return &v }

func rawSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// Where a request stands is read from its run's newest steps rows, however
// far back they lie: a run parked on an approval (the Defer arm of gate_path,
// then finish_run awaiting_approval) and a run whose asking step has since
// committed, both followed by 40 000 rows of a busy neighbour.
func TestStandingFromFarBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	parked, _ := w.StartRun(ctx, "parked long ago", "/w")
	w.CheckpointStep(ctx, parked, harness.StepRecord{Step: 1, Decision: "read a", Result: "r"})
	deferredReq, _ := w.PutPending(ctx, parked, 2, "write", "a", ptr("A"))
	w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: parked, Step: 2, Kind: store.PolicyDecision, Act: "write", Target: "a", Decision: store.PolicyDefer, Source: "approver"})
	w.CheckpointStep(ctx, parked, harness.StepRecord{Step: 2, Decision: "awaiting approval (request " + deferredReq + ")", Result: ""})
	w.FinishRun(ctx, parked, store.OutcomeAwaitingApproval)
	moved, _ := w.StartRun(ctx, "moved on long ago", "/w")
	w.AcquireLease(ctx, moved, time.Hour)
	stale, _ := w.PutPending(ctx, moved, 1, "exec", "ls", nil)
	w.CheckpointStep(ctx, moved, harness.StepRecord{Step: 1, Decision: "ran ls", Result: "r"})
	busy, _ := w.StartRun(ctx, "busy", "/w")
	// One statement writes the neighbour's steps 1 to 40 000 in order, as
	// a loop of single inserts would.
	if _, err := rawSQL(t, path).Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
		INSERT INTO steps (run_id, step, decision, result) SELECT ?, i, 'read', 'r' FROM n`, busy); err != nil {
		t.Fatal(err)
	}
	s := openRO(t, path)
	if q := request(t, s, store.Approval, deferredReq); q.Standing != store.StandingParked {
		t.Errorf("deferred request: %v (%s), want parked", q.Standing, q.StandingReason)
	}
	if q := request(t, s, store.Approval, stale); q.Standing != store.StandingOrphaned || !strings.Contains(q.StandingReason, "gone past step 1") {
		t.Errorf("request of a step since committed: %v (%s), want orphaned", q.Standing, q.StandingReason)
	}
}
