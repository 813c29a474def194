package ioharness

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// The facts of the populated fixture (written by io-harness 0.22.0): the
// token breakdown of its provider calls, what the provider cited and ran at
// step 4, its checkpoints and its decided approval, against the JSON
// io-harness wrote beside it.
func TestFactsPopulated(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, "store-0.22.0", "populated.json"))
	s := openFixture(t, filepath.Join(dir, "store-0.22.0", "populated.sqlite3"))
	ctx := context.Background()
	runID := idStr(want.num("run_id"))

	calls, err := s.ProviderCalls(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var sum [7]int64
	keys := []string{"prompt_tokens", "completion_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "server_tool_requests"}
	for _, c := range want["provider_calls"].([]any) {
		u := fixtureJSON(fixtureJSON(c.(map[string]any))["usage"].(map[string]any))
		for i, k := range keys {
			sum[i] += u.num(k)
		}
	}
	u := store.SumUsage(calls)
	got := []*int64{u.Prompt, u.Completion, u.Total, u.CacheRead, u.CacheWrite, u.Reasoning, u.ServerToolRequests}
	for i, k := range keys {
		if got[i] == nil || *got[i] != sum[i] {
			t.Errorf("%s summed = %v, want %d", k, got[i], sum[i])
		}
	}
	if u.Calls != 4 || u.Reported != 4 || u.Failed != 0 || *u.Total != want.num("spent_tokens") {
		t.Errorf("usage = %+v", u)
	}

	f, err := s.RunFacts(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, fact := range []store.Fact{store.FactUsage, store.FactCheckpoints, store.FactCitations, store.FactServerTools,
		store.FactMemory, store.FactContextEvents, store.FactTodos, store.FactSandbox, store.FactGates, store.FactMCP} {
		if !f.Recorded.Has(fact) {
			t.Errorf("0.22 store: %s not recorded", fact)
		}
	}
	// Tables 0.22 did not have: not recorded, not empty.
	for _, fact := range []store.Fact{store.FactRunEvents, store.FactQueue, store.FactMessages, store.FactGateAttempts,
		store.FactFolds, store.FactProcesses} {
		if f.Recorded.Has(fact) {
			t.Errorf("0.22 store: %s recorded", fact)
		}
	}
	if f.Checkpoints != int(want.num("checkpoint_event_count")) || f.Resumes() != 0 {
		t.Errorf("checkpoints %d, resumes %d; want %d, 0", f.Checkpoints, f.Resumes(), want.num("checkpoint_event_count"))
	}
	wantCites := want["citations"].([]any)
	if len(f.Citations) != len(wantCites) {
		t.Fatalf("%d citations, want %d", len(f.Citations), len(wantCites))
	}
	for i, c := range wantCites {
		w := fixtureJSON(c.(map[string]any))
		if f.Citations[i].URL != w.str("url") || f.Citations[i].Title != w.str("title") || f.Citations[i].CitedText != w.str("cited_text") {
			t.Errorf("citation %d = %+v, want %v", i, f.Citations[i], w)
		}
	}
	wantTools := want["server_tool_calls"].([]any)
	if len(f.ServerTools) != len(wantTools) {
		t.Fatalf("%d server tool calls, want %d", len(f.ServerTools), len(wantTools))
	}
	for i, c := range wantTools {
		w := fixtureJSON(c.(map[string]any))
		if f.ServerTools[i].Tool != w.str("tool") || f.ServerTools[i].Provider != w.str("provider") || f.ServerTools[i].Error != w.str("error") {
			t.Errorf("server tool %d = %+v, want %v", i, f.ServerTools[i], w)
		}
	}

	// Step 4 carries them too, with its own provider call's breakdown, and
	// is summarised by what it did: the write, not the provider's note on a
	// failed search written first in its result.
	steps, err := s.Steps(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	last := steps[len(steps)-1]
	if last.Number != 4 || last.ResultHead != "[wrote out.txt] (5 chars)" {
		t.Errorf("step 4 summarised by %q", last.ResultHead)
	}
	d, err := s.StepDetail(ctx, runID, last.RowID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Citations) != 2 || len(d.ServerTools) != 2 || d.ServerTools[1].Error != "max_uses_exceeded" {
		t.Errorf("step 4: citations %+v, server tools %+v", d.Citations, d.ServerTools)
	}
	if len(d.ProviderCalls) != 1 || d.ProviderCalls[0].CacheReadTokens == nil || *d.ProviderCalls[0].CacheReadTokens != 7 ||
		*d.ProviderCalls[0].ReasoningTokens != 5 || *d.ProviderCalls[0].ServerToolCalls != 1 {
		t.Errorf("step 4 provider call = %+v", d.ProviderCalls)
	}
	for _, st := range steps[:3] {
		if d, _ := s.StepDetail(ctx, runID, st.RowID); len(d.Citations)+len(d.ServerTools) != 0 {
			t.Errorf("step %d has step 4's citations or server tools", st.Number)
		}
	}

	// Every step's detail in one pass agrees with the details read one by one.
	all, err := s.StepDetails(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(steps) {
		t.Fatalf("%d details, want %d", len(all), len(steps))
	}
	for i, st := range steps {
		one, err := s.StepDetail(ctx, runID, st.RowID)
		if err != nil {
			t.Fatal(err)
		}
		a := all[i]
		if a.Result != one.Result || a.ToolCallFull != one.ToolCallFull || len(a.Observations) != len(one.Observations) ||
			len(a.Edits) != len(one.Edits) || len(a.Policy) != len(one.Policy) || len(a.ProviderCalls) != len(one.ProviderCalls) ||
			len(a.Citations) != len(one.Citations) || len(a.ServerTools) != len(one.ServerTools) || a.Prompt != "" {
			t.Errorf("step %d: one pass %+v, one by one %+v", st.Number, a, one)
		}
	}

	// The decided approval is read with its verdict.
	reqs, err := s.Requests(ctx, false, runID)
	if err != nil {
		t.Fatal(err)
	}
	p := fixtureJSON(want["pending"].(map[string]any))
	if len(reqs) != 1 || !reqs[0].Resolved || reqs[0].Decision != p.str("resolved") || reqs[0].Target != p.str("target") {
		t.Errorf("requests = %+v, want the approval decided %s", reqs, p.str("resolved"))
	}
}

// The aggregates fixture (io-harness 0.29.0): gate failures by phase,
// resumes, memory and the assembler's other events, per run, against the
// read-back io-harness recorded beside it (gate_failures_by_phase and
// recovery in src/state/accounting.rs count the same rows store-wide).
func TestFactsAggregates(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, "store-0.29.0", "aggregates.json"))
	s := openFixture(t, filepath.Join(dir, "store-0.29.0", "aggregates.sqlite3"))
	ctx := context.Background()
	readBack := fixtureJSON(want["read_back"].(map[string]any))
	comp := fixtureJSON(want["composition"].(map[string]any))
	byPhase := map[string]int{}
	resumes := 0
	for _, wr := range readBack["runs"].([]any) {
		w := fixtureJSON(wr.(map[string]any))
		id := idStr(w.num("run_id"))
		f, err := s.RunFacts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var phases []string
		for _, g := range f.GateFailures {
			for range g.Count {
				phases = append(phases, g.Key)
			}
			byPhase[g.Key] += g.Count
		}
		var wantPhases []string
		for _, p := range w["gate_failures"].([]any) {
			wantPhases = append(wantPhases, p.(string))
		}
		sort.Strings(wantPhases)
		if !equalStrings(phases, wantPhases) {
			t.Errorf("run %s gate failures %v, want %v", id, phases, wantPhases)
		}
		if f.Resumes() != int(w.num("resumes")) {
			t.Errorf("run %s: %d resumes, want %d", id, f.Resumes(), w.num("resumes"))
		}
		resumes += f.Resumes()
		var kinds []string
		for _, e := range f.ContextEvents {
			kinds = append(kinds, e.Kind)
		}
		var wantKinds []string
		for _, k := range w["context_kinds"].([]any) {
			wantKinds = append(wantKinds, k.(string))
		}
		if !equalStrings(kinds, wantKinds) {
			t.Errorf("run %s context events %v, want %v", id, kinds, wantKinds)
		}
		if !f.Recorded.Has(store.FactProcesses) || f.Recorded.Has(store.FactRunEvents) || f.Recorded.Has(store.FactGateAttempts) {
			t.Errorf("0.29 store records %v", f.Recorded)
		}
	}
	for k, v := range comp["gate_failures_by_phase"].(map[string]any) {
		if byPhase[k] != int(v.(float64)) {
			t.Errorf("phase %s: %d failures, want %v", k, byPhase[k], v)
		}
	}
	if resumes != int(fixtureJSON(comp["recovery"].(map[string]any)).num("resumes")) {
		t.Errorf("%d resumes in all", resumes)
	}

	f, err := s.RunFacts(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	wantMem := readBack["memory"].([]any)
	if len(f.Memory) != len(wantMem) {
		t.Fatalf("run 1 wrote %d memory entries, want %d", len(f.Memory), len(wantMem))
	}
	for i, m := range wantMem {
		w := fixtureJSON(m.(map[string]any))
		if f.Memory[i].Key != w.str("key") || f.Memory[i].Value != w.str("value") || f.Memory[i].Step != int(w.num("step")) {
			t.Errorf("memory %d = %+v, want %v", i, f.Memory[i], w)
		}
	}
	if f2, _ := s.RunFacts(ctx, "2"); len(f2.Memory) != 0 {
		t.Errorf("run 2 wrote no memory, got %+v", f2.Memory)
	}
}
