package starweaver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Starweaver's facts: the cache counts of each response's Usage, the
// checkpoints of a run, the continuations that resume it, and the tools the
// provider ran (provider_tool_call parts); the rest are not recorded.
func TestRunFacts(t *testing.T) {
	s, _ := openV07(t)
	ctx := context.Background()
	f, err := s.RunFacts(ctx, runR1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Checkpoints != 2 || f.Resumes() != 1 || f.Markers[0].Detail != "continued by "+runR2 {
		t.Errorf("R1: %d checkpoints, markers %+v", f.Checkpoints, f.Markers)
	}
	for _, fact := range []store.Fact{store.FactRunEvents, store.FactCitations, store.FactGates, store.FactMemory, store.FactTodos} {
		if f.Recorded.Has(fact) {
			t.Errorf("Starweaver records %s?", fact)
		}
	}
	calls, _ := s.ProviderCalls(ctx, runR1)
	u := store.SumUsage(calls)
	if u.CacheWrite == nil || *u.CacheWrite != 3890 || *u.CacheRead != 3890 || u.Reasoning != nil || u.ServerToolRequests != nil {
		t.Errorf("R1 usage %+v", u)
	}
	if f, _ := s.RunFacts(ctx, runR3); f.Resumes() != 0 {
		t.Errorf("R3 is continued by nobody: %+v", f.Markers)
	}
	if _, err := s.RunFacts(ctx, "run_nope"); err == nil {
		t.Error("facts of a run that does not exist")
	}
	last, err := s.LastWrite(ctx)
	// The fixture's newest record is session C's run R7, updated at 10:10.
	if err != nil || !last.Equal(at("10:10:00")) {
		t.Errorf("last write %v (%v), want the newest updated_at", last, err)
	}
}

// A response whose provider ran a web search for the model: the step's
// detail and the run's facts carry it as a server tool.
func TestServerTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "starweaver.sqlite")
	f := newDB(t, path, false)
	const sess, run = "session_5c7e2a1d-0000-4000-8000-000000000001", "run_5c7e2a1d-0000-4000-8000-000000000002"
	t1 := at("10:00:00")
	f.session(sess, 1, J{"session_id", sess, "title", "search", "workspace", "/w", "status", "active",
		"created_at", jz(t1), "updated_at", jz(t1)}, t1, t1)
	r := f.run(sess, run, 1, 1, runJ(sess, run, "look it up", "completed", "", 1, t1, t1.Add(time.Minute)), t1, t1.Add(time.Minute))
	r.stream(1, J{"kind", "run_start", "run_id", run, "conversation_id", convA})
	r.stream(1, response(1, run, t1.Add(5*time.Second), "end_turn", usageJ(1000, 0, 0, 50),
		J{"kind", "provider_tool_call", "call", J{"id", "srvtoolu_01", "name", "web_search", "arguments", J{"query", "sqlite wal"}}},
		textPart("Found it.")))
	f.close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	steps, err := s.Steps(ctx, run)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %+v, %v", steps, err)
	}
	d, err := s.StepDetail(ctx, run, steps[0].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.ServerTools) != 1 || d.ServerTools[0].Tool != "web_search" || d.ServerTools[0].Provider != "anthropic" || d.ServerTools[0].Step != 1 {
		t.Errorf("server tools %+v", d.ServerTools)
	}
	facts, err := s.RunFacts(ctx, run)
	if err != nil || len(facts.ServerTools) != 1 || !facts.Recorded.Has(store.FactServerTools) {
		t.Errorf("facts %+v, %v", facts, err)
	}
}
