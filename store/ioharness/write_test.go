package ioharness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

func newStore(t *testing.T) *written {
	t.Helper()
	w, err := harness.Create(filepath.Join(t.TempDir(), "runs.sqlite3"))
	if err != nil {
		t.Fatal(err)
	}
	return readBack(t, w)
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ptr[T any](v T) *T { return &v }

func TestRunLifecycleRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	id := must[string](t)(s.StartRun(ctx, "write out.txt", "/repo"))
	if err := s.SetProvider(ctx, id, "fixture"); err != nil {
		t.Fatal(err)
	}
	r := must[store.Run](t)(s.Run(ctx, id))
	if r.Goal != "write out.txt" || r.Workspace != "/repo" || r.Status != "running" || r.Provider != "fixture" ||
		r.StartedAt.IsZero() || time.Since(r.StartedAt) > time.Minute || r.Summary != nil {
		t.Fatalf("started run = %+v", r)
	}
	for i, tok := range []int64{120, 230} {
		err := s.CheckpointStep(ctx, id, harness.StepRecord{Step: i + 1, Decision: "read a.txt", Result: "ok", Prompt: "p",
			ToolCall: `read_file:{"path":"a.txt"}`, Tokens: tok, Turn: &harness.Turn{Text: ptr("reading"), Calls: []harness.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a.txt"}`)}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordRetry(ctx, id, 3, 1, "Server (HTTP 529)", 1500*time.Millisecond, "provider error"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointStep(ctx, id, harness.StepRecord{Step: 3, Decision: "wrote out.txt", Result: "done", Tokens: 50}); err != nil {
		t.Fatal(err)
	}
	steps := must[[]store.Step](t)(s.Steps(ctx, id))
	if len(steps) != 3 || steps[2].Decision != "wrote out.txt" || len(steps[2].Retries) != 1 ||
		steps[2].Retries[0].Decision != "retry 1 after Server (HTTP 529) in 1.5s" || steps[2].Pending {
		t.Fatalf("steps = %+v", steps)
	}
	if steps[0].ResultHead != "ok" {
		t.Errorf("result head = %q", steps[0].ResultHead)
	}
	d := must[store.StepDetail](t)(s.StepDetail(ctx, id, steps[0].RowID))
	if d.Prompt != "p" || d.Result != "ok" || d.TurnText != "reading" || !d.HasTurnText {
		t.Errorf("detail = %+v", d)
	}
	if n := must[int](t)(s.LastStep(ctx, id)); n != 3 {
		t.Errorf("last step %d, want 3", n)
	}
	if n := must[int64](t)(s.SpentTokens(ctx, id)); n != 400 {
		t.Errorf("spent %d, want 400", n)
	}
	evs := must[[]Event](t)(s.Events(ctx, id))
	if len(evs) != 3 {
		t.Errorf("%d checkpoint events, want 3 (one per committed step, none for the retry)", len(evs))
	}
	if e := must[float64](t)(s.ElapsedSeconds(ctx, id)); e < 0 || e > 60 {
		t.Errorf("elapsed %v", e)
	}

	if err := s.FinishRun(ctx, id, "success"); err != nil {
		t.Fatal(err)
	}
	r = must[store.Run](t)(s.Run(ctx, id))
	if r.Status != "completed" || r.Outcome != "success" || r.Summary == nil || !r.Summary.Success ||
		r.Summary.Steps != 3 || r.Summary.Tokens != 400 || !r.Summary.HasDuration || r.Summary.FinishedAt.IsZero() {
		t.Fatalf("finished run = %+v summary %+v", r, r.Summary)
	}
}

func TestFinishRunDerivesStatus(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for outcome, want := range map[string]string{
		"awaiting_approval": "paused", "awaiting_plan": "paused", "awaiting_answer": "completed",
		"denied": "completed", "step_cap_reached": "completed", "escalated_terminal": "completed",
	} {
		id := must[string](t)(s.StartRun(ctx, outcome, "/w"))
		if err := s.FinishRun(ctx, id, store.Outcome(outcome)); err != nil {
			t.Fatal(err)
		}
		r := must[store.Run](t)(s.Run(ctx, id))
		hasRow := 0
		s.read.QueryRow("SELECT COUNT(*) FROM run_outcomes WHERE run_id = ?", runNum(id)).Scan(&hasRow)
		if string(r.Status) != want || (want == "paused") == (hasRow == 1) {
			t.Errorf("%s: status %s, summary row %d; want %s and a summary only when completed", outcome, r.Status, hasRow, want)
		}
		// The row of a run parked on a question is not its summary: it
		// has not ended (summarize).
		if (want == "completed" && outcome != "awaiting_answer") != (r.Summary != nil) {
			t.Errorf("%s: summary %v", outcome, r.Summary)
		}
	}
	if err := s.FinishRun(ctx, "999", "success"); !isKind(err, store.ErrNoSuchRun) {
		t.Errorf("finish of a missing run: %v", err)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	root := must[string](t)(s.StartRun(ctx, "coordinate", "/w"))
	child := must[string](t)(s.StartChildRun(ctx, "scout", "/w", root, 1))
	grand := must[string](t)(s.StartChildRun(ctx, "deeper", "/w", child, 2))
	for _, e := range []store.AgentEvent{
		{RunID: root, Step: 1, Kind: "spawn", ChildRunID: child, Detail: "scout#2: scout"},
		{RunID: root, Step: 1, Kind: "budget_draw", Tokens: ptr[int64](80), Remaining: ptr[int64](999920)},
		{RunID: root, Step: 2, Kind: "spawn_refused", Detail: "agents"},
	} {
		if err := s.RecordAgentEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	tree := must[[]store.Run](t)(s.Tree(ctx, root))
	if len(tree) != 3 || tree[2].ID != grand || tree[2].Depth != 2 || tree[2].ParentID != child {
		t.Fatalf("tree = %+v", tree)
	}
	ae := must[[]store.AgentEvent](t)(s.AgentEvents(ctx, root))
	if len(ae) != 3 || ae[0].ChildRunID != child || *ae[1].Remaining != 999920 || ae[2].Detail != "agents" {
		t.Errorf("agent events = %+v", ae)
	}
	if err := s.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: child, Step: 1, Kind: "refusal", Act: "write", Target: "secrets/k", Rule: "secrets/*", Layer: "base"}); err != nil {
		t.Fatal(err)
	}
	pe := must[[]store.PolicyEvent](t)(s.PolicyEvents(ctx, child))
	if len(pe) != 1 || pe[0].Rule != "secrets/*" || pe[0].Decision != "" {
		t.Errorf("policy = %+v", pe)
	}
	if err := s.RecordContextEvent(ctx, child, 1, "assembled", "carried=0", ptr[int64](40)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordContextEvent(ctx, child, 2, "assembled", "carried=1", ptr[int64](90)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordContextReported(ctx, child, 1, 120); err != nil {
		t.Fatal(err)
	}
	cs := must[[]store.ContextSample](t)(s.ContextSamples(ctx, child))
	if len(cs) != 2 || cs[0].Estimated != 40 || cs[0].Reported == nil || *cs[0].Reported != 120 || cs[1].Reported != nil {
		t.Errorf("samples = %+v", cs)
	}
	if err := s.RecordProviderCall(ctx, child, store.ProviderCall{Step: 1, Attempt: 0, Provider: "p", Failure: "Timeout", LatencyMS: 30000}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordProviderCall(ctx, child, store.ProviderCall{Step: 1, Attempt: 1, Provider: "p", Model: "m", TotalTokens: ptr[int64](120), PromptTokens: ptr[int64](100), LatencyMS: 900, FinishReason: "tool_use"}); err != nil {
		t.Fatal(err)
	}
	pc := must[[]store.ProviderCall](t)(s.ProviderCalls(ctx, child))
	if len(pc) != 2 || pc[0].TotalTokens != nil || pc[0].Failure != "Timeout" || *pc[1].TotalTokens != 120 || pc[1].At.IsZero() {
		t.Errorf("provider calls = %+v", pc)
	}
	if err := s.RecordEdit(ctx, child, 1, store.Edit{Tool: "write_file", Path: "a.txt", LinesAdded: 2, Hunk: "+a\n+b\n"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordObservations(ctx, child, []store.Observation{{Step: 1, Kind: "read", Target: "a.txt", Text: "[read a.txt]"}, {Step: 1, Kind: "message", Text: "hi"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointStep(ctx, child, harness.StepRecord{Step: 1, Decision: "wrote a.txt", Result: "r"}); err != nil {
		t.Fatal(err)
	}
	steps := must[[]store.Step](t)(s.Steps(ctx, child))
	d := must[store.StepDetail](t)(s.StepDetail(ctx, child, steps[0].RowID))
	if len(d.Edits) != 1 || d.Edits[0].Hunk != "+a\n+b\n" || len(d.Observations) != 2 || d.Observations[1].Target != "" ||
		len(d.Policy) != 1 || len(d.ProviderCalls) != 2 {
		t.Errorf("detail = %+v", d)
	}
	if err := s.RecordEvent(ctx, Event{RunID: child, Step: 1, Source: "mcp", Kind: "called", Server: "fs", Tool: "ls", OK: ptr(true), Millis: ptr(12 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordEvent(ctx, Event{RunID: child, Step: 1, Source: "sandbox", Kind: "exec", Backend: "bwrap", Detail: "ls -la"}); err != nil {
		t.Fatal(err)
	}
	evs := must[[]Event](t)(s.Events(ctx, child))
	var mcp, sandbox *Event
	for i := range evs {
		switch evs[i].Source {
		case "mcp":
			mcp = &evs[i]
		case "sandbox":
			sandbox = &evs[i]
		}
	}
	if mcp == nil || mcp.Server != "fs" || mcp.OK == nil || !*mcp.OK || mcp.Millis == nil || *mcp.Millis != 12*time.Millisecond || sandbox == nil || sandbox.Backend != "bwrap" {
		t.Errorf("events = %+v", evs)
	}
	if err := s.RecordSpawn(ctx, harness.Spawn{ParentRunID: root, Step: 1, ChildRunID: child, Goal: "scout", VerifyFile: "a.txt", Needle: "A", MaxSteps: ptr[int64](3), AsName: "scout"}); err != nil {
		t.Fatal(err)
	}
	sp, ok, err := s.FindSpawn(ctx, root, 1, "scout")
	if err != nil || !ok || sp.ChildRunID != child || sp.DenyWrite != "[]" || *sp.MaxSteps != 3 || sp.AsName != "scout" {
		t.Errorf("find spawn = %+v %v %v", sp, ok, err)
	}
	if _, ok, _ := s.FindSpawn(ctx, root, 1, "scout "); ok {
		t.Error("find spawn matched a different goal")
	}
	if err := s.CheckpointStep(ctx, root, harness.StepRecord{Step: 1, Decision: "spawned", Result: "r", Tokens: 80}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckpointStep(ctx, grand, harness.StepRecord{Step: 1, Decision: "x", Result: "r", Tokens: 5}); err != nil {
		t.Fatal(err)
	}
	if n := must[int64](t)(s.SpentTokensTree(ctx, root)); n != 85 {
		t.Errorf("tree tokens %d, want 85", n)
	}
	trace := must[string](t)(s.CanonicalTrace(ctx, child))
	if trace != "step 1 | tokens 0 | decision wrote a.txt | tool_call  | prompt  | result r\ncontext 1 | assembled | carried=0\ncontext 2 | assembled | carried=1\n" {
		t.Errorf("trace = %q", trace)
	}
}

func TestRequestsRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	root := must[string](t)(s.StartRun(ctx, "root", "/w"))
	child := must[string](t)(s.StartChildRun(ctx, "child", "/w", root, 1))
	aid := must[string](t)(s.PutPending(ctx, child, 2, "write", "deploy/prod.yaml", ptr("replicas: 4\n")))
	qid := must[string](t)(s.PutQuestion(ctx, root, 3, "Which region?", "for the deploy", []string{"eu", "us"}))
	pid := must[string](t)(s.PutPlan(ctx, root, 4, []store.PlanStep{{Intent: "read"}, {Intent: "write", Agent: "writer"}}))
	open := must[[]store.Request](t)(s.Requests(ctx, true))
	if len(open) != 3 {
		t.Fatalf("open = %+v", open)
	}
	a, q, p := open[0], open[1], open[2]
	if a.Kind != store.Approval || a.ID != aid || a.Content != "replicas: 4\n" || !a.HasContent || a.ContentBytes != 12 ||
		!equalStrings(a.Ancestry, []string{root, child}) {
		t.Errorf("approval = %+v", a)
	}
	if q.Kind != store.Question || q.ID != qid || !equalStrings(q.Choices, []string{"eu", "us"}) || q.Context != "for the deploy" || q.AskedAt.IsZero() {
		t.Errorf("question = %+v", q)
	}
	if p.Kind != store.Plan || p.ID != pid || len(p.PlanSteps) != 2 || p.PlanSteps[1].Agent != "writer" {
		t.Errorf("plan = %+v", p)
	}
	if _, err := s.ResolvePending(ctx, aid, "maybe"); err == nil {
		t.Error("resolve accepted a word other than approve/deny")
	}
	if r := must[store.DecideResult](t)(s.ResolvePending(ctx, aid, "approve")); !r.Won {
		t.Error("first resolve lost")
	}
	if r := must[store.DecideResult](t)(s.ResolvePending(ctx, aid, "deny")); r.Won || r.Decision != "approve" {
		t.Errorf("second resolve = %+v, want lost to approve", r)
	}
	if r := must[store.DecideResult](t)(s.AnswerQuestion(ctx, qid, "eu", "human")); !r.Won {
		t.Error("answer lost")
	}
	if r := must[store.DecideResult](t)(s.AnswerQuestion(ctx, qid, "us", "attached")); r.Won || r.Decision != "eu" || r.DecidedBy != "human" {
		t.Errorf("second answer = %+v", r)
	}
	if r := must[store.DecideResult](t)(s.DecidePlan(ctx, pid, "revise", "do it in one step", "attached")); !r.Won {
		t.Error("plan decision lost")
	}
	got := must[store.Request](t)(s.Store.Request(ctx, store.RequestKey{Kind: store.Plan, ID: pid}))
	if got.Decision != "revise" || got.Correction != "do it in one step" || got.DecidedBy != "attached" || !got.Resolved {
		t.Errorf("plan after decision = %+v", got)
	}
	if open := must[[]store.Request](t)(s.Requests(ctx, true)); len(open) != 0 {
		t.Errorf("still open: %+v", open)
	}
	if _, err := s.Store.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "77"}); !isKind(err, store.ErrNoSuchReq) {
		t.Errorf("missing request: %v", err)
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "m", "/w"))
	if ok := must[bool](t)(s.MemoryPut(ctx, "/w", "test-command", "go test ./...", run, 1, "")); !ok {
		t.Fatal("put not written")
	}
	must[bool](t)(s.MemoryPut(ctx, "/w", "owner", "the parser stays", run, 2, "decision"))
	must[bool](t)(s.MemoryPut(ctx, harness.GlobalMemory, "style", "short", run, 2, ""))
	if ok := must[bool](t)(s.MemoryPut(ctx, "/w", "test-command", "make test", run, 3, "")); !ok {
		t.Fatal("overwrite not written")
	}
	m, ok, err := s.MemoryGet(ctx, "/w", "test-command")
	if err != nil || !ok || m.Value != "make test" || m.Step != 3 || m.Kind != "fact" {
		t.Errorf("get = %+v %v %v", m, ok, err)
	}
	rawDB(t, s.Path()).Exec("UPDATE memory SET pinned = 1 WHERE key = 'owner'")
	if ok := must[bool](t)(s.MemoryPut(ctx, "/w", "owner", "changed", run, 4, "")); ok {
		t.Error("a pinned entry was overwritten")
	}
	if m, _, _ := s.MemoryGet(ctx, "/w", "owner"); m.Value != "the parser stays" || !m.Pinned || m.Kind != "decision" {
		t.Errorf("pinned = %+v", m)
	}
	long := strings.Repeat("é", harness.MaxMemoryEntryChars+5)
	must[bool](t)(s.MemoryPut(ctx, "/w", "long", long, run, 5, ""))
	if m, _, _ := s.MemoryGet(ctx, "/w", "long"); !strings.HasSuffix(m.Value, "…[truncated]") || len([]rune(m.Value)) != harness.MaxMemoryEntryChars {
		t.Errorf("long value kept %d runes", len([]rune(m.Value)))
	}
	if l := must[[]MemoryEntry](t)(s.MemoryList(ctx, "/w")); len(l) != 3 {
		t.Errorf("list = %+v", l)
	}
	if ok := must[bool](t)(s.MemoryDelete(ctx, "/w", "long")); !ok {
		t.Error("delete found nothing")
	}
	if n := must[int](t)(s.MemoryClear(ctx, "/w")); n != 2 {
		t.Errorf("clear removed %d, want 2", n)
	}
	if l := must[[]MemoryEntry](t)(s.MemoryList(ctx, harness.GlobalMemory)); len(l) != 1 {
		t.Errorf("global = %+v", l)
	}
}

func TestLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	a, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	run := must[string](t)(a.StartRun(ctx, "leased", "/w"))
	gen := must[int64](t)(a.AcquireLease(ctx, run, time.Hour))
	if gen != 1 {
		t.Errorf("first generation %d", gen)
	}
	if g := must[int64](t)(a.AcquireLease(ctx, run, 2*time.Hour)); g != 1 {
		t.Errorf("re-acquire by the owner bumped the generation to %d", g)
	}
	var ce *harness.ConflictError
	if _, err := b.AcquireLease(ctx, run, time.Hour); !errors.As(err, &ce) || ce.Owner != a.Owner() {
		t.Fatalf("takeover of a live lease: %v", err)
	}
	l := must[*store.Lease](t)(r.RunLease(ctx, run))
	if l == nil || l.OwnerPID() <= 0 || l.TTL != 2*time.Hour || store.LivenessOf(l, true, time.Now()) != store.Live {
		t.Errorf("lease = %+v", l)
	}
	if err := a.RenewLease(ctx, run); err != nil {
		t.Fatal(err)
	}
	// The owner "dies": b may take over, and a's next commit must fail.
	defaultPIDAlive := store.PIDAlive
	store.PIDAlive = func(int) bool { return false }
	defer func() { store.PIDAlive = defaultPIDAlive }()
	if g := must[int64](t)(b.AcquireLease(ctx, run, time.Hour)); g != 2 {
		t.Errorf("takeover generation %d, want 2", g)
	}
	store.PIDAlive = defaultPIDAlive
	err = a.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "stale driver", Result: "r"})
	if !errors.As(err, &ce) {
		t.Fatalf("commit by the displaced owner: %v, want ConflictError", err)
	}
	if steps := must[[]store.Step](t)(r.Steps(ctx, run)); len(steps) != 0 {
		t.Errorf("the refused step landed: %+v", steps)
	}
	var events int
	r.read.QueryRow("SELECT COUNT(*) FROM checkpoint_events").Scan(&events)
	if events != 0 {
		t.Errorf("%d checkpoint events after a refused commit: step and event must land together or not at all", events)
	}
	if err := a.RenewLease(ctx, run); !errors.As(err, &ce) {
		t.Errorf("renew by the displaced owner: %v", err)
	}
	if err := b.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "new driver", Result: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseLease(ctx, run); err != nil {
		t.Fatal(err)
	}
	if l := must[*store.Lease](t)(r.RunLease(ctx, run)); l == nil || l.Owner != b.Owner() {
		t.Errorf("a released b's lease: %+v", l)
	}
	if err := b.ReleaseLease(ctx, run); err != nil {
		t.Fatal(err)
	}
	if l := must[*store.Lease](t)(r.RunLease(ctx, run)); l != nil {
		t.Errorf("lease after release = %+v", l)
	}
}

func TestCheckResumable(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "r", "/w"))
	if err := s.CheckResumable(ctx, run); err != nil {
		t.Errorf("fresh run: %v", err)
	}
	if err := s.CheckResumable(ctx, "42"); !isKind(err, store.ErrNotResumable) {
		t.Errorf("missing run: %v", err)
	}
	rawDB(t, s.Path()).Exec("UPDATE runs SET turn_kind = 'reply' WHERE id = ?", runNum(run))
	if err := s.CheckResumable(ctx, run); !isKind(err, store.ErrNotResumable) || !strings.Contains(err.Error(), "conversational turn") {
		t.Errorf("reply turn: %v", err)
	}
	rawDB(t, s.Path()).Exec("PRAGMA user_version = 8")
	if err := s.CheckResumable(ctx, run); !isKind(err, store.ErrNotResumable) || !strings.Contains(err.Error(), "format 8") {
		t.Errorf("newer format: %v", err)
	}
}

// Tool calls are stored as io-harness's serde_json writes them: object keys
// sorted, no HTML escaping.
func TestStepTurnCallsEncoding(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "t", "/w"))
	err := s.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "ran", Result: "r",
		Turn: &harness.Turn{Calls: []harness.ToolCall{{Name: "run", Arguments: []byte(`{"z":1,"cmd":"make && make <install>","a":{"y":2,"b":3}}`)}}}})
	if err != nil {
		t.Fatal(err)
	}
	var calls string
	var text any
	s.read.QueryRow("SELECT calls, text FROM step_turns").Scan(&calls, &text)
	if want := `[{"name":"run","arguments":{"a":{"b":3,"y":2},"cmd":"make && make <install>","z":1}}]`; calls != want || text != nil {
		t.Errorf("calls = %s (text %v), want %s and NULL text", calls, text, want)
	}
}

// Usage is all or nothing, as io-harness writes it.
func TestProviderCallUsageColumns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "p", "/w"))
	s.RecordProviderCall(ctx, run, store.ProviderCall{Step: 1, Provider: "p", Failure: "Timeout", LatencyMS: 5})
	s.RecordProviderCall(ctx, run, store.ProviderCall{Step: 1, Attempt: 1, Provider: "p", TotalTokens: ptr[int64](9), CacheReadTokens: ptr[int64](4), LatencyMS: 5})
	rows, _ := s.read.Query("SELECT prompt_tokens, total_tokens, cache_read_tokens, reasoning_tokens FROM provider_calls ORDER BY id")
	defer rows.Close()
	var got []string
	for rows.Next() {
		var a, b, c, d any
		rows.Scan(&a, &b, &c, &d)
		got = append(got, fmt.Sprint(a, b, c, d))
	}
	if want := []string{"<nil> <nil> <nil> <nil>", "0 9 4 0"}; !equalStrings(got, want) {
		t.Errorf("usage columns = %q, want %q", got, want)
	}
}

// A release that failed can be retried: the handle keeps the lease until
// the row is really gone.
func TestReleaseLeaseRetry(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "l", "/w"))
	must[int64](t)(s.AcquireLease(ctx, run, time.Minute))
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.ReleaseLease(dead, run); err == nil {
		t.Fatal("a release with a cancelled context reported success")
	}
	if err := s.ReleaseLease(ctx, run); err != nil {
		t.Fatal(err)
	}
	if l := must[*store.Lease](t)(s.RunLease(ctx, run)); l != nil {
		t.Errorf("lease still held after the retried release: %+v", l)
	}
}
