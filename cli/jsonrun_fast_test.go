package cli

import (
	"encoding/json"
	"testing"
)

// appendRunJSON writes what json.Marshal writes, for every field set and
// unset and for strings encoding/json escapes.
func TestAppendRunJSONIsMarshal(t *testing.T) {
	s := func(v string) *string { return &v }
	n, n64, yes := 7, int64(-12), true
	for _, j := range []jsonRun{
		{},
		{ID: "1", RootID: "1", State: "running", Goal: "goal 1", Liveness: "live"},
		{ID: "2", ParentID: s("1"), RootID: "1", Depth: 1, State: "done", Status: s("completed"), Outcome: s("success"),
			Success: &yes, Goal: `a "quoted" <b>&amp;</b> \ path`, Workspace: s("/w/é"), Provider: s("p\x00\x1b[31m"),
			TurnKind: s("reply"), AgentSteps: &n, AgentTokens: &n64, TreeAgents: 3, TreeSteps: &n, TreeTokens: &n64,
			StartedAt: s("2026-11-29T12:00:00Z"), FinishedAt: s("x\u2028y"), DurationMS: &n64, AgentWait: 1, TreeWait: 2,
			Liveness: "bad \xff utf-8", Lease: &jsonLease{HeldBy: "1", Owner: "o", PID: &n, AcquiredAt: s("t")},
			Recovery: &jsonRecovery{AttemptID: "a", Step: 2, Tool: "write"}},
	} {
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRunJSON(nil, &j)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("appendRunJSON:\n got %s\nwant %s", got, want)
		}
	}
}
