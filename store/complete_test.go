package store

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// bareCore is a format with nothing but Core: every other answer is
// Complete's fallback.
type bareCore struct {
	runs    []Run
	stats   map[string]RunStats
	steps   map[string][]Step
	details map[int64]StepDetail
	calls   map[string][]ProviderCall
	reqs    []Request
}

type bareCursor struct{ n int }

func (bareCursor) CursorFormat() string { return "bare" }

func (b *bareCore) Path() string             { return "/bare" }
func (b *bareCore) Format() string           { return "bare" }
func (b *bareCore) ReadOnly() (bool, string) { return true, "bare" }
func (b *bareCore) RecordsLeases() bool      { return false }
func (b *bareCore) Runs(context.Context) ([]Run, error) {
	return append([]Run(nil), b.runs...), nil
}
func (b *bareCore) RunStats(_ context.Context, ids []string) (map[string]RunStats, error) {
	out := map[string]RunStats{}
	for _, id := range ids {
		if st, ok := b.stats[id]; ok {
			out[id] = st
		}
	}
	return out, nil
}
func (b *bareCore) Steps(_ context.Context, id string) ([]Step, error) { return b.steps[id], nil }
func (b *bareCore) StepDetail(_ context.Context, _ string, row int64) (StepDetail, error) {
	d, ok := b.details[row]
	if !ok {
		return StepDetail{}, Errorf(b.Path(), ErrNotFound, nil, "no row %d", row)
	}
	return d, nil
}
func (b *bareCore) ContextSamples(context.Context, string) ([]ContextSample, error) { return nil, nil }
func (b *bareCore) Requests(_ context.Context, unresolved bool, _ ...string) ([]Request, error) {
	return b.reqs, nil
}
func (b *bareCore) AgentEvents(context.Context, ...string) ([]AgentEvent, error) { return nil, nil }
func (b *bareCore) ProviderCalls(_ context.Context, id string) ([]ProviderCall, error) {
	return b.calls[id], nil
}
func (b *bareCore) Head(context.Context) (Cursor, error) { return bareCursor{7}, nil }
func (b *bareCore) Changes(context.Context, Cursor) (*Changes, Cursor, error) {
	return &Changes{}, bareCursor{7}, nil
}
func (b *bareCore) Classify(Request, Run, *Lease, time.Time) (Delivery, string) {
	return Closed, "bare"
}
func (b *bareCore) Decide(context.Context, Decision) (DecideResult, error) {
	return DecideResult{}, ErrReadOnly
}
func (b *bareCore) Watch() WatchSpec { return WatchSpec{} }
func (b *bareCore) Close() error     { return nil }

// A timeline with a pending step (only folded rows), a step with a retry
// folded under it, and a plain step.
func bare() *bareCore {
	steps := []Step{
		{RowID: 1, RunID: "r", Number: 1, Kind: StepTurn, Decision: "look", ToolCall: "ls", ResultHead: "a b", Tokens: 10},
		{RowID: 3, RunID: "r", Number: 2, Kind: StepTurn, Decision: "edit", Tokens: 20,
			Retries: []Retry{{RowID: 2, Kind: StepRetry, Decision: "429"}}},
		{RowID: 4, RunID: "r", Number: 3, Kind: StepCompaction, Decision: "fold", Pending: true,
			Retries: []Retry{{RowID: 4, Kind: StepCompaction, Decision: "fold"}}},
	}
	return &bareCore{
		runs:  []Run{{ID: "r", Goal: "go"}, {ID: "s"}},
		stats: map[string]RunStats{"r": {Steps: 3, Tokens: 30}},
		steps: map[string][]Step{"r": steps},
		details: map[int64]StepDetail{
			1: {Step: steps[0], Prompt: "p1", Result: "whole result", Observations: []Observation{{RowID: 9, Text: "seen"}}},
			3: {Step: steps[1], Prompt: "p3", Result: "cut…", Truncated: []string{"result"}},
			4: {Step: steps[2]},
		},
		calls: map[string][]ProviderCall{"r": {{Step: 1}, {Step: 2}, {Step: 2}, {Step: 3}}},
		reqs:  []Request{{Kind: Approval, ID: "a1", RunID: "r"}, {Kind: Question, ID: "a1", RunID: "s"}},
	}
}

func TestCompleteOfABareCoreFallsBack(t *testing.T) {
	ctx := context.Background()
	src := Complete(bare())
	if c := src.Capabilities(); c != 0 {
		t.Fatalf("a bare core's capabilities = %s, want none", c)
	}

	r, err := src.Run(ctx, "r")
	if err != nil || r.Goal != "go" || !r.StatsKnown || r.Steps != 3 || r.Tokens != 30 {
		t.Errorf("Run(r) = %+v, %v: want the run from Runs, counted with RunStats", r, err)
	}
	if _, err := src.Run(ctx, "x"); !errors.Is(err, ErrNoSuchRun) {
		t.Errorf("Run(x) = %v, want ErrNoSuchRun", err)
	}
	q, err := src.Request(ctx, RequestKey{Kind: Question, ID: "a1"})
	if err != nil || q.RunID != "s" {
		t.Errorf("Request(question a1) = %+v, %v: want the question, not the approval of the same id", q, err)
	}
	if _, err := src.Request(ctx, RequestKey{Kind: Plan, ID: "a1"}); !errors.Is(err, ErrNoSuchReq) {
		t.Errorf("Request(plan a1) = %v, want ErrNoSuchReq", err)
	}
	if ok, err := src.HasRun(ctx, "s"); !ok || err != nil {
		t.Errorf("HasRun(s) = %v, %v", ok, err)
	}
	if ok, err := src.HasRun(ctx, "x"); ok || err != nil {
		t.Errorf("HasRun(x) = %v, %v", ok, err)
	}
	if runs, all, err := src.RecentRuns(ctx, 1); len(runs) != 2 || !all || err != nil {
		t.Errorf("RecentRuns(1) = %d runs, all %v, %v: want every run, all", len(runs), all, err)
	}
	cur, whole, err := src.HeadNewest(ctx, 1)
	if cur != (bareCursor{7}) || !whole || err != nil {
		t.Errorf("HeadNewest = %v, %v, %v: want Head, whole", cur, whole, err)
	}
	if c, err := src.WholeHead(ctx, bareCursor{3}); c != (bareCursor{3}) || err != nil {
		t.Errorf("WholeHead = %v, %v: want the cursor given", c, err)
	}

	f, err := src.RunFacts(ctx, "r")
	if err != nil || f.RunID != "r" || len(f.Recorded) != 0 {
		t.Errorf("RunFacts = %+v, %v: want nothing recorded", f, err)
	}
	if a, err := src.Activity(ctx, ActivityQuery{RunIDs: []string{"r"}}); err != nil || len(a.Recorded) != 0 || a.Events != nil {
		t.Errorf("Activity = %+v, %v: want nothing recorded", a, err)
	}
	if w, err := src.LastWrite(ctx); !w.IsZero() || err != nil {
		t.Errorf("LastWrite = %v, %v: want zero", w, err)
	}
	if evs, err := src.PolicyEvents(ctx, "r"); evs != nil || err != nil {
		t.Errorf("PolicyEvents = %v, %v: want none", evs, err)
	}
	if src.CarriesReason(Approval, VerdictDeny) {
		t.Error("CarriesReason: a format that does not say carries no reason")
	}
	if p := src.Problems(); p != nil {
		t.Errorf("Problems = %v", p)
	}
	if n := src.ReadingNote(); n != "" {
		t.Errorf("ReadingNote = %q", n)
	}
	if _, err := src.EncodeCursor(bareCursor{7}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("EncodeCursor = %v, want ErrUnsupported", err)
	}
	if _, err := src.DecodeCursor([]byte("{}")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("DecodeCursor = %v, want ErrUnsupported", err)
	}
	var b strings.Builder
	// No trace of its own: vigil's steps trace, in the records diff reads.
	want := "step 1 | tokens 10 | decision look | tool_call ls | prompt  | result whole result\n" +
		"step 2 | tokens 20 | decision edit | tool_call  | prompt  | result cut…\n" +
		"step 3 | tokens 0 | decision fold | tool_call  | prompt  | result \n"
	if err := src.WriteCanonicalTrace(ctx, "r", &b); err != nil || b.String() != want {
		t.Errorf("WriteCanonicalTrace = %v\n%s\nwant the steps trace\n%s", err, b.String(), want)
	}
}

// The rows the fallback hands out fold back into the steps Steps reads,
// whole or from any row on, a page at a time.
func TestCompleteStepRowsFoldBackIntoSteps(t *testing.T) {
	ctx := context.Background()
	core := bare()
	src := Complete(core)
	want := core.steps["r"]
	var rows []StepRow
	if err := src.EachStepRow(ctx, "r", 0, 0, func(p []StepRow) error { rows = append(rows, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].RowID <= rows[i-1].RowID {
			t.Fatalf("rows out of order: %+v", rows)
		}
	}
	if got := AppendStepRows(nil, rows); !reflect.DeepEqual(got, want) {
		t.Errorf("the rows fold into\n%+v\nwant\n%+v", got, want)
	}
	// From the second step's first row (its retry) to the end: the last two
	// steps.
	rows = nil
	src.EachStepRow(ctx, "r", 2, 0, func(p []StepRow) error { rows = append(rows, p...); return nil })
	if got := AppendStepRows(nil, rows); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("rows 2.. fold into %+v, want %+v", got, want[1:])
	}
	// Up to the second step's own row.
	rows = nil
	src.EachStepRow(ctx, "r", 0, 3, func(p []StepRow) error { rows = append(rows, p...); return nil })
	if got := AppendStepRows(nil, rows); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("rows ..3 fold into %+v, want %+v", got, want[:2])
	}
	stop := errors.New("stop")
	if err := src.EachStepRow(ctx, "r", 0, 0, func([]StepRow) error { return stop }); err != stop {
		t.Errorf("fn's error = %v, want it back", err)
	}
	calls, err := src.ProviderCallsFor(ctx, "r", 2, 3)
	if err != nil || len(calls) != 3 || calls[0].Step != 2 {
		t.Errorf("ProviderCallsFor(2, 3) = %+v, %v: want the calls of steps 2 and 3", calls, err)
	}
}

func TestCompleteStepRowsPage(t *testing.T) {
	var steps []Step
	for i := range stepRowPage + 3 {
		steps = append(steps, Step{RowID: int64(i + 1), RunID: "r", Number: i + 1})
	}
	core := &bareCore{steps: map[string][]Step{"r": steps}}
	var pages []int
	Complete(core).EachStepRow(context.Background(), "r", 0, 0, func(p []StepRow) error {
		pages = append(pages, len(p))
		return nil
	})
	if !reflect.DeepEqual(pages, []int{stepRowPage, 3}) {
		t.Errorf("pages of %v rows, want %d then 3", pages, stepRowPage)
	}
}

func TestCompleteDetailsAndFields(t *testing.T) {
	ctx := context.Background()
	src := Complete(bare())
	ds, err := src.StepDetails(ctx, "r")
	if err != nil || len(ds) != 3 || ds[0].Result != "whole result" || ds[0].Prompt != "" {
		t.Fatalf("StepDetails = %+v, %v: want each step's detail, its prompt left to StepDetail", ds, err)
	}
	var b strings.Builder
	if err := src.WriteStepField(ctx, "r", 1, "result", &b); err != nil || b.String() != "whole result" {
		t.Errorf("WriteStepField(result) = %q, %v: a field whole in the detail is written", b.String(), err)
	}
	b.Reset()
	if err := src.WriteStepField(ctx, "r", 1, ObservationField(9), &b); err != nil || b.String() != "seen" {
		t.Errorf("WriteStepField(observation 9) = %q, %v", b.String(), err)
	}
	b.Reset()
	if err := src.WriteStepField(ctx, "r", 3, "result", &b); !errors.Is(err, ErrUnsupported) || b.Len() != 0 {
		t.Errorf("WriteStepField of a cut field = %q, %v: want it refused (a cut field stays cut)", b.String(), err)
	}
	if err := src.WriteStepField(ctx, "r", 1, "no such", io.Discard); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WriteStepField of no field = %v", err)
	}
}

// tracerCore has a trace as a string only, and a reason with a deny.
type tracerCore struct{ *bareCore }

func (tracerCore) CanonicalTrace(_ context.Context, id string) (string, error) {
	return "trace " + id, nil
}
func (tracerCore) CarriesReason(k RequestKind, v Verdict) bool {
	return k == Approval && v == VerdictDeny
}

func TestCompleteFindsWhatAFormatHas(t *testing.T) {
	src := Complete(tracerCore{bare()})
	if c := src.Capabilities(); c != CapTrace|CapReason {
		t.Fatalf("capabilities = %s, want trace,reason", c)
	}
	var b strings.Builder
	if err := src.WriteCanonicalTrace(context.Background(), "r", &b); err != nil || b.String() != "trace r" {
		t.Errorf("WriteCanonicalTrace = %q, %v: want the Tracer's string", b.String(), err)
	}
	if !src.CarriesReason(Approval, VerdictDeny) || src.CarriesReason(Plan, VerdictRevise) {
		t.Error("CarriesReason is not the format's")
	}
	if Complete(src) != src {
		t.Error("Complete of a Source is not that Source")
	}
}

func TestCapabilitiesNames(t *testing.T) {
	if len(capNames) != int(bitsOf(AllCapabilities)) {
		t.Fatalf("%d names for %d capabilities", len(capNames), bitsOf(AllCapabilities))
	}
	c := CapWindow | CapPolicy | CapTrace
	if got := CapabilitiesNamed(append(c.Names(), "from-a-newer-vigil")); got != c {
		t.Errorf("names %v read back as %s", c.Names(), got)
	}
	if c.String() != "window,policy,trace" || Capabilities(0).String() != "none" {
		t.Errorf("String = %q", c.String())
	}
}

func bitsOf(c Capabilities) (n uint) {
	for ; c != 0; c &= c - 1 {
		n++
	}
	return n
}

// A step in flight that an adapter hands out as a pending row (no folded
// rows under it) unfolds into that row and folds back into itself.
func TestStepRowsOfAPendingStepFoldBack(t *testing.T) {
	steps := []Step{
		{RowID: 2, RunID: "r", Number: 1, Decision: "tool", ToolCall: "ls", ResultHead: "a", Tokens: 10},
		{RowID: 5, RunID: "r", Number: 2, Decision: "running", ToolCall: "sleep 6", Tokens: 20, Pending: true},
	}
	rows := StepRowsOf(steps, 0, 0)
	if len(rows) != 2 || !rows[1].Pending {
		t.Fatalf("rows %+v: want the step's and the pending one", rows)
	}
	if got := AppendStepRows(nil, rows); !reflect.DeepEqual(got, steps) {
		t.Errorf("the rows fold into\n%+v\nwant\n%+v", got, steps)
	}
	// Its committed row, later, replaces it.
	got := AppendStepRows(steps, []StepRow{{RowID: 6, RunID: "r", Number: 2, Decision: "tool", ToolCall: "sleep 6", ResultHead: "done", Tokens: 20}})
	if len(got) != 2 || got[1].Pending || got[1].RowID != 6 || got[1].ResultHead != "done" {
		t.Errorf("after its commit: %+v", got)
	}
}
