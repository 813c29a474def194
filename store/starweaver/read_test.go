package starweaver

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

func openV07(t *testing.T) (*Store, string) {
	t.Helper()
	path := buildV07(t, t.TempDir())
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func byID(t *testing.T, runs []store.Run) map[string]store.Run {
	t.Helper()
	out := map[string]store.Run{}
	for _, r := range runs {
		if _, dup := out[r.ID]; dup {
			t.Fatalf("run %s listed twice", r.ID)
		}
		out[r.ID] = r
	}
	return out
}

func TestRunsMapping(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(t, runs)
	if len(got) != 9 {
		t.Fatalf("%d runs, want 9", len(got))
	}
	for i := 1; i < len(runs); i++ {
		if runs[i].StartedAt.After(runs[i-1].StartedAt) {
			t.Fatalf("runs not newest first: %s after %s", runs[i].ID, runs[i-1].ID)
		}
	}
	type want struct {
		parent   string
		depth    int
		goal, ws string
		status   store.Status
		outcome  store.Outcome
		turnKind string
		started  time.Time
		finished bool
		success  bool
		steps    int
		tokens   int64
		end      time.Time
	}
	wants := map[string]want{
		// Continued by R2 (the CLI resume leaves it waiting): finished, "continued".
		runR1: {"", 0, "SWACC-RUN-1: inventory the billing service and record what needs migrating", "/work/billing", "completed", "continued", "cli",
			at("09:00:00.412550911"), true, false, 2, 4314 + 4932, at("09:00:12.611020774")},
		// A continuation is a root of its own; it too has been continued (R3).
		runR2: {"", 0, "SWACC-RUN-2: continue the migration\n\nResuming from run " + runR1 + " with any persisted approval and deferred-tool decisions.", "/work/billing",
			"completed", "continued", "continuation", at("09:05:00.301557090"), true, false, 1, 5330, at("09:05:20.671404512")},
		runR3: {"", 0, "SWACC-RUN-3: finish the migration after review\n\nResuming from run " + runR2 + " with any persisted approval and deferred-tool decisions.", "/work/billing",
			"running", "", "continuation", at("09:06:05.1"), false, false, 0, 0, time.Time{}},
		runS1: {runR3, 1, "check payouts for ORM use", "/work/billing", "completed", "finished", "cli", at("09:06:09"), true, true, 3, 1540 + 1635 + 1725, at("09:06:20")},
		runS2: {runS1, 2, "check payouts/ledger", "/work/billing", "completed", "finished", "cli", at("09:06:14"), true, true, 1, 830, at("09:06:16")},
		runR4: {"", 0, "SWACC-RUN-4: review the payouts endpoints", "/work/payouts", "completed", "finished", "cli", at("10:00:00"), true, true, 2, 3080 + 3560, at("10:02:00")},
		runR5: {"", 0, "SWACC-RUN-5: fix the payouts handler and run the tests", "/work/payouts", "paused", "", "cli", at("10:05:00"), false, false, 0, 0, time.Time{}},
		runR6: {"", 0, "SWACC-RUN-6: summarise the outage", "", "failed", "failed", "cli", at("10:00:05"), true, false, 0, 0, at("10:00:09.377812909")},
		runR7: {"", 0, "SWACC-RUN-7: try again", "", "completed", "cancelled", "cli", at("10:09:00"), true, false, 1, 110, at("10:10:00")},
	}
	for id, w := range wants {
		r, ok := got[id]
		if !ok {
			t.Fatalf("run %s missing", id)
		}
		check := func(field string, g, x any) {
			t.Helper()
			if !reflect.DeepEqual(g, x) {
				t.Errorf("%s %s = %#v, want %#v", id, field, g, x)
			}
		}
		check("ParentID", r.ParentID, w.parent)
		check("Depth", r.Depth, w.depth)
		check("Goal", r.Goal, w.goal)
		check("Workspace", r.Workspace, w.ws)
		check("Status", r.Status, w.status)
		check("Outcome", r.Outcome, w.outcome)
		check("TurnKind", r.TurnKind, w.turnKind)
		check("StartedAt", r.StartedAt, w.started)
		check("Lease", r.Lease, (*store.Lease)(nil))
		if !w.finished {
			check("Summary", r.Summary, (*store.Summary)(nil))
			check("StatsKnown", r.StatsKnown, false)
			continue
		}
		if r.Summary == nil {
			t.Errorf("%s: no summary for a finished run", id)
			continue
		}
		check("Summary", *r.Summary, store.Summary{Outcome: w.outcome, Success: w.success, Steps: w.steps, Tokens: w.tokens,
			Duration: w.end.Sub(w.started), HasDuration: true, FinishedAt: w.end})
		check("Steps", r.Steps, w.steps)
		check("Tokens", r.Tokens, w.tokens)
		check("StatsKnown", r.StatsKnown, true)
	}
	if s.RecordsLeases() {
		t.Error("RecordsLeases true: Starweaver records no lease vigil reads")
	}
	if s.Format() != "starweaver" || s.Path() == "" {
		t.Errorf("Format %q Path %q", s.Format(), s.Path())
	}
	if ro, _ := s.ReadOnly(); ro {
		t.Error("a writable file opened read-only")
	}

	// Unfinished runs are counted by RunStats up to the stream's end.
	st, err := s.RunStats(ctx, []string{runR3, runR5, runS2, runR6})
	if err != nil {
		t.Fatal(err)
	}
	top, _ := s.streamTop(ctx)
	for id, w := range map[string]store.RunStats{
		runR3: {Steps: 1, Tokens: 6120, Through: top, Provider: "anthropic"},
		runR5: {Steps: 1, Tokens: 4250, Through: top, Provider: "anthropic"}, // the unknown-schema record (99 999 tokens) is skipped
		runS2: {Steps: 1, Tokens: 830, Through: top, Provider: "anthropic"},  // from S1's stream, where its records were merged
		runR6: {Steps: 0, Tokens: 0, Through: top},
	} {
		if st[id] != w {
			t.Errorf("RunStats[%s] = %+v, want %+v", id, st[id], w)
		}
	}
}

func stepLine(st store.Step) string {
	s := st.Decision
	if st.ToolCall != "" {
		s += " · " + st.ToolCall
	}
	return s
}

func TestSteps(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	type row struct {
		n      int
		line   string
		head   string
		tokens int64
		at     time.Time
	}
	wants := map[string][]row{
		runR1: {
			{1, `I'll start with the billing README. · read_file {"path":"billing/README.md"}`, "", 4314, at("09:00:03.118004552")},
			{1, "result read_file", "# Billing", 0, at("09:00:03.118004552")},
			{2, `The ledger still uses the legacy ORM; noting it. · edit_file {"new":"ledger: move to the new ORM","old":"TODO","path":"billing/MIGRATION.md"}`, "", 4932, at("09:00:10.5")},
			{2, "approval required: edit_file", apprR1, 0, at("09:00:10.5")},
			{2, "suspended: waits on a human (hitl_control_flow) at tool_return", "", 0, at("09:00:10.5")},
		},
		runR2: {
			{1, `Writing the migration notes and starting CI. · write_file {"content":"# Notes\nledger → new ORM","path":"SWACC/notes.md"}; run_ci_pipeline {"pipeline":"billing-migration","ref":"swacc/ledger-orm"}`, "", 5330, at("09:05:05.2")},
			{1, "approval required: write_file", apprR2, 0, at("09:05:05.2")},
			{1, "deferred: run_ci_pipeline", defR2, 0, at("09:05:05.2")},
			{1, "suspended: waits on a human (hitl_control_flow) at tool_return", "", 0, at("09:05:05.2")},
		},
		// R3's stream also holds S1's merged records: they are not R3's steps.
		runR3: {{1, `Delegating the payouts check to a subagent. · delegate_task {"agent":"explorer","task":"check payouts for ORM use"}`, "", 6120, at("09:06:08")}},
		runS1: {
			{1, `Searching payouts. · grep {"path":"payouts","pattern":"orm"}`, "", 1540, at("09:06:11")},
			{1, "result grep", "no matches", 0, at("09:06:11")},
			{2, `Asking a helper to double-check the ledger bridge. · delegate_task {"agent":"checker","task":"check payouts/ledger"}`, "", 1635, at("09:06:13")},
			{2, "result delegate_task", "clean", 0, at("09:06:13")},
			{3, "payouts has no ORM use.", "", 1725, at("09:06:19")},
		},
		runS2: {{1, "Checked payouts/ledger: clean.", "", 830, at("09:06:15")}},
		// Bare v0 records and v1 records side by side.
		runR4: {
			{1, `Reviewing the payouts endpoints. · read_file {"path":"payouts/api.go"}`, "", 3080, at("10:00:30")},
			{1, "result read_file", "package payouts", 0, at("10:00:30")},
			{2, "All payouts endpoints reviewed.", "", 3560, at("10:01:50")},
		},
		// A v2 envelope read; an unknown schema skipped.
		runR5: {
			{1, `Running the payouts tests and fixing the handler. · run_shell {"command":"go test ./payouts/..."}; edit_file {"new":"return err","old":"panic(err)","path":"payouts/handler.go"}; fetch_ci_status {"build":"b-1234"}`, "", 4250, at("10:05:20")},
			{1, "approval required: run_shell", apprP1, 0, at("10:05:20")},
			{1, "approval required: edit_file", apprP2, 0, at("10:05:20")},
			{1, "deferred: fetch_ci_status", defR5, 0, at("10:05:20")},
			{1, "suspended: waits on a human (hitl_control_flow) at tool_return", "", 0, at("10:05:20")},
		},
		runR6: {{0, "run failed (model_http): SWACC-FAIL: provider returned 529 overloaded after 3 retries", "", 0, time.Time{}}},
		runR7: {{1, "Starting over.", "", 110, at("10:09:30")}, {1, "run cancelled: user interrupt", "", 0, at("10:09:30")}},
	}
	for id, want := range wants {
		steps, err := s.Steps(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != len(want) {
			t.Fatalf("%s: %d steps, want %d: %+v", id, len(steps), len(want), steps)
		}
		for i, w := range want {
			st := steps[i]
			if st.RunID != id || st.Number != w.n || stepLine(st) != w.line || st.ResultHead != w.head || st.Tokens != w.tokens || !st.At.Equal(w.at) || st.Pending || st.Latency != 0 {
				t.Errorf("%s step %d = %+v, want %+v", id, i, st, w)
			}
			if i > 0 && st.RowID <= steps[i-1].RowID {
				t.Errorf("%s: row ids not increasing: %d after %d", id, st.RowID, steps[i-1].RowID)
			}
		}
		// Stable: a second read returns the same rows.
		again, _ := s.Steps(ctx, id)
		if !reflect.DeepEqual(again, steps) {
			t.Errorf("%s: a second read differs", id)
		}
	}
	if _, err := s.Steps(ctx, "run_nope"); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("unknown run: %v", err)
	}
	// Provider calls: one per model response, the usage as reported.
	calls, err := s.ProviderCalls(ctx, runR1)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[1]
	if c.Step != 2 || c.Attempt != 1 || c.Provider != "anthropic" || c.Model != "claude-sonnet-4-5-20250929" ||
		*c.PromptTokens != 4790 || *c.CompletionTokens != 142 || *c.TotalTokens != 4932 || c.FinishReason != "tool_calls" ||
		*c.CacheReadTokens != 3890 || *c.CacheWriteTokens != 0 || c.ReasoningTokens != nil || c.TTFTMS != nil ||
		!c.At.Equal(at("09:00:10.5")) || c.LatencyMS != 0 || c.RunID != runR1 {
		t.Errorf("call = %+v", c)
	}
	// No estimate is recorded, so there are no context samples (never a
	// made-up estimate beside the provider's count).
	for _, id := range []string{runR1, runR3} {
		cs, err := s.ContextSamples(ctx, id)
		if err != nil || len(cs) != 0 {
			t.Errorf("ContextSamples(%s) = %v, %v", id, cs, err)
		}
	}
}

func TestStepDetail(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	steps, _ := s.Steps(ctx, runR1)

	d, err := s.StepDetail(ctx, runR1, steps[0].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Prompt != "SWACC-RUN-1: inventory the billing service and record what needs migrating" {
		t.Errorf("first step prompt %q", d.Prompt)
	}
	if !strings.Contains(d.Result, "read_file:\n# Billing\n\nModules: invoices, ledger, payouts.") {
		t.Errorf("result %q", d.Result)
	}
	if len(d.Observations) != 1 || d.Observations[0] != (store.Observation{Kind: "checkpoint", Target: "tool_return", Text: "ckpt_a1b2c3d4-0000-4000-8000-000000000001"}) {
		t.Errorf("observations %+v", d.Observations)
	}

	d, err = s.StepDetail(ctx, runR1, steps[2].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Number != 2 || d.Tokens != 4932 || d.Prompt != "" {
		t.Errorf("detail %+v", d.Step)
	}
	if !d.HasTurnText || d.TurnText != "The ledger still uses the legacy ORM; noting it.\nNext: the migration file." {
		t.Errorf("turn %q", d.TurnText)
	}
	wantCall := "edit_file (toolu_01bpMyt24NkYt8wDp3fNXvH8)\n{\n  \"new\": \"ledger: move to the new ORM\",\n  \"old\": \"TODO\",\n  \"path\": \"billing/MIGRATION.md\"\n}"
	if d.ToolCallFull != wantCall {
		t.Errorf("tool call %q", d.ToolCallFull)
	}
	if d.Result != "edit_file: approval required — "+apprR1 {
		t.Errorf("result %q", d.Result)
	}
	kinds := []string{}
	for _, o := range d.Observations {
		kinds = append(kinds, o.Kind+" "+o.Target)
	}
	if strings.Join(kinds, ", ") != "checkpoint tool_return, approval_requested edit_file" {
		t.Errorf("observations %v", kinds)
	}
	if len(d.ProviderCalls) != 1 || *d.ProviderCalls[0].PromptTokens != 4790 {
		t.Errorf("provider calls %+v", d.ProviderCalls)
	}

	// A tool return row: the result in full, and the call it answers.
	d, err = s.StepDetail(ctx, runR1, steps[1].RowID)
	if err != nil || d.Decision != "result read_file" || d.ResultHead != "# Billing" || d.Number != 1 ||
		d.Result != "read_file:\n# Billing\n\nModules: invoices, ledger, payouts.\nLegacy ORM: yes (ledger)." ||
		d.ToolCallFull != "read_file (toolu_01YzSJzNMsuuLh4ijXN4s8vp)\n{\n  \"path\": \"billing/README.md\"\n}" {
		t.Errorf("return row %+v %v", d, err)
	}
	d, err = s.StepDetail(ctx, runR1, steps[3].RowID)
	if err != nil || d.Decision != "approval required: edit_file" || len(d.Observations) != 1 || d.Observations[0].Kind != "approval_requested" {
		t.Errorf("approval row %+v %v", d, err)
	}

	// The suspension row.
	d, err = s.StepDetail(ctx, runR1, steps[4].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Decision != "suspended: waits on a human (hitl_control_flow) at tool_return" || !strings.Contains(d.Result, "reason: hitl_control_flow") {
		t.Errorf("suspension %+v", d)
	}

	// A deferred call's return.
	r2, _ := s.Steps(ctx, runR2)
	d, _ = s.StepDetail(ctx, runR2, r2[0].RowID)
	if !strings.Contains(d.Result, "run_ci_pipeline: deferred to an external result — "+defR2) ||
		!strings.Contains(d.Result, "write_file: approval required — "+apprR2) {
		t.Errorf("R2 result %q", d.Result)
	}
	if len(d.Observations) != 3 { // a checkpoint and two APPROVAL_REQUESTED (one a deferral)
		t.Errorf("R2 observations %+v", d.Observations)
	}

	// A subagent's step read from its parent's stream.
	s2, _ := s.Steps(ctx, runS2)
	d, err = s.StepDetail(ctx, runS2, s2[0].RowID)
	if err != nil || d.TurnText != "Checked payouts/ledger: clean." || d.RunID != runS2 {
		t.Errorf("S2 detail %+v %v", d, err)
	}
	// S1's merged copy in R3's stream is nobody's step (S1 has its own).
	s1, _ := s.Steps(ctx, runS1)
	if _, err := s.StepDetail(ctx, runS1, s1[0].RowID-100); err == nil {
		t.Error("a row of another run read as S1's")
	}
	// A row of another run is not this run's.
	if _, err := s.StepDetail(ctx, runR2, steps[0].RowID); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("foreign row: %v", err)
	}
	if _, err := s.StepDetail(ctx, runR1, 1<<40); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("missing row: %v", err)
	}
	// A subagent's own rows: S1's last step has no calls.
	d, err = s.StepDetail(ctx, runS1, s1[4].RowID)
	if err != nil || d.Result != "" || d.ToolCallFull != "" || len(d.Observations) != 1 {
		t.Errorf("S1 last %+v %v", d, err)
	}
}

func TestRequests(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	all, err := s.Requests(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range all {
		keys = append(keys, r.Key().String())
	}
	want := []string{"approval " + apprR1, "approval " + apprR2, "approval " + apprS1, "approval " + apprP1, "approval " + apprP2,
		"question " + defR2, "question " + defR5}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("requests\n%v\nwant\n%v", keys, want)
	}
	get := func(id string) store.Request {
		for _, r := range all {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no %s", id)
		return store.Request{}
	}
	r := get(apprR1)
	if !r.Resolved || r.Decision != "approve" || r.DecidedBy != "starweaver-cli" || r.Act != "edit_file" || r.Target != "billing/MIGRATION.md" ||
		r.Step != 2 || !r.AskedAt.Equal(at("09:00:11.402913")) || !reflect.DeepEqual(r.Ancestry, []string{runR1}) {
		t.Errorf("approved %+v", r)
	}
	if !r.HasContent || !strings.Contains(r.Content, `"reason": "edit_file requires approval"`) || r.ContentBytes != int64(len(r.Content)) {
		t.Errorf("content %q", r.Content)
	}
	r = get(apprP1)
	if r.Resolved || r.Act != "run_shell" || r.Target != "go test ./payouts/..." || r.Step != 1 || r.RunID != runR5 {
		t.Errorf("pending %+v", r)
	}
	r = get(apprS1)
	if !reflect.DeepEqual(r.Ancestry, []string{runR3, runS1}) || r.Step != 1 {
		t.Errorf("subagent ancestry %+v", r)
	}
	r = get(defR2)
	if r.Kind != store.Question || r.Resolved || r.Question != "Deferred tool call run_ci_pipeline billing-migration: CI runs on the external build farm" ||
		!strings.Contains(r.Context, `"ref": "swacc/ledger-orm"`) || r.Step != 1 || !r.AskedAt.Equal(at("09:05:19.118301250")) {
		t.Errorf("deferred %+v", r)
	}
	if r := get(defR5); r.Resolved || r.RunID != runR5 { // a bare v0 record
		t.Errorf("bare deferred %+v", r)
	}

	// Unresolved: pending in a run that has not ended (S1's stale approval
	// waits on nobody).
	open, err := s.Requests(ctx, true)
	if err != nil || len(open) != 5 {
		t.Fatalf("unresolved: %d %v", len(open), err)
	}
	for _, r := range open {
		if r.ID == apprS1 {
			t.Error("a finished run's pending record listed as waiting")
		}
	}
	some, err := s.Requests(ctx, false, runR5)
	if err != nil || len(some) != 3 {
		t.Fatalf("R5's: %d %v", len(some), err)
	}
	one, err := s.Request(ctx, store.RequestKey{Kind: store.Question, ID: defR5})
	if err != nil || one.ID != defR5 {
		t.Fatalf("Request: %+v %v", one, err)
	}
	if _, err := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "approval_nope"}); !errors.Is(err, store.ErrNoSuchReq) {
		t.Fatalf("missing request: %v", err)
	}
}

func TestClassify(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	runs, _ := s.Runs(ctx)
	rs := byID(t, runs)
	reqs, _ := s.Requests(ctx, false)
	now := at("10:30:00")
	for _, c := range []struct {
		id   string
		want store.Delivery
		why  string
	}{
		{apprR1, store.Closed, "already decided (approve)"},
		{apprR2, store.Deferred, "is being resumed (claim claim-7f3a, preflight"},
		{defR2, store.Deferred, "is being resumed"},
		{apprS1, store.Closed, "has ended (finished)"},
		{apprP1, store.DeliveryUnknown, "waits for a resume"},
		{defR5, store.DeliveryUnknown, "waits for a resume"},
	} {
		for _, r := range reqs {
			if r.ID != c.id {
				continue
			}
			d, why := s.Classify(r, rs[r.RunID], nil, now)
			if d != c.want || !strings.Contains(why, c.why) || strings.Contains(why, "\n") {
				t.Errorf("%s: %v %q, want %v %q", c.id, d, why, c.want, c.why)
			}
		}
	}
	// A request of a continued run nobody claims is closed; of a running
	// one, unknown.
	d, _ := s.Classify(store.Request{RunID: runR1}, rs[runR1], nil, now)
	if d != store.Closed {
		t.Errorf("continued run: %v", d)
	}
	d, why := s.Classify(store.Request{RunID: runR3}, rs[runR3], nil, now)
	if d != store.DeliveryUnknown || !strings.Contains(why, "records no lease") {
		t.Errorf("running run: %v %q", d, why)
	}
}

func TestAgentEvents(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	evs, err := s.AgentEvents(ctx, runR1, runR3, runS1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.RunID[:8]+" "+string(e.Kind)+" "+e.ChildRunID+" "+e.Detail)
	}
	want := []string{
		"run_53cd checkpoint  tool_return ckpt_a1b2c3d4-0000-4000-8000-000000000001",
		"run_53cd checkpoint  tool_return ckpt_a1b2c3d4-0000-4000-8000-000000000002",
		"run_e2f9 spawn " + runS1 + " delegated task task_5f6e7d8c-0000-4000-8000-00000000000a",
		"run_d7a3 checkpoint  run_complete ckpt_5151aaaa-0000-4000-8000-000000000001",
		"run_d7a3 spawn " + runS2 + " delegated task task_0a0b0c0d-0000-4000-8000-00000000000b",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if evs[1].Step != 2 {
		t.Errorf("checkpoint step %d", evs[1].Step)
	}
}

func TestEnvelopes(t *testing.T) {
	for _, c := range []struct {
		raw    string
		schema string
		bare   bool
		ok     bool
	}{
		{`{"schema":"a","version":0,"payload":{"x":1}}`, "a", true, true},
		{`{"schema":"a","version":1,"payload":{"x":1}}`, "a", true, true},
		{`{"schema":"a","version":2,"payload":{"x":1}}`, "a", true, true},
		{`{"schema":"a","version":3,"payload":{"x":1}}`, "a", true, false},
		{`{"schema":"b","version":1,"payload":{"x":1}}`, "a", true, false},
		{`{"x":1}`, "a", true, true},
		{`{"x":1}`, "a", false, false}, // claims and publications take no bare value
		{`{"schema":"a","payload":{"x":1}}`, "a", true, false},
		{`[1]`, "a", true, false},
		{`not json`, "a", true, false},
	} {
		if _, ok := unwrap([]byte(c.raw), c.schema, c.bare); ok != c.ok {
			t.Errorf("unwrap(%s) ok = %v", c.raw, ok)
		}
	}
	// The shortest exact fraction of 0, 3, 6 or 9 digits
	// (docs/formats/starweaver.md, "Timestamps").
	for in, want := range map[string]string{
		"2026-07-11T00:00:00Z":           "2026-07-11T00:00:00Z",
		"2026-07-13T09:05:20.6Z":         "2026-07-13T09:05:20.600Z",
		"2026-07-13T09:05:20.600003Z":    "2026-07-13T09:05:20.600003Z",
		"2026-07-13T09:00:12.611020774Z": "2026-07-13T09:00:12.611020774Z",
	} {
		if got := formatTS(parseTS(in), "Z"); got != want {
			t.Errorf("formatTS(%s) = %s", in, got)
		}
	}
	if got := parseTS("2026-07-13T09:00:12.611020774+00:00"); !got.Equal(at("09:00:12.611020774")) {
		t.Errorf("column form: %v", got)
	}
}
