package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/codex"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// The three rollouts Codex 0.171.0 wrote against the mock server: a parent
// that spawned a sub-agent, the sub-agent, and a run of three slow shell
// steps.
const (
	parentID = "01a24257-4441-7b61-b0b0-d01415b98758"
	childID  = "01a24257-48c7-7c81-9ad6-00e2d3cd9cfd"
	steps3ID = "01a24257-53d0-7901-84c8-7a183281d969"
)

// fixtures is the directory of the real rollouts: fixtures/agents/codex/
// rollout under $VIGIL_SHARED or the shared directory beside the clone.
func fixtures(t testing.TB) string {
	t.Helper()
	return testkit.Fixtures(t, "agents/codex/rollout")
}

func open(t testing.TB, path string) store.Source {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if src.Format() != codex.Format {
		t.Fatalf("%s opened as %q", path, src.Format())
	}
	return src
}

func runsByID(t testing.TB, src store.Source) map[string]store.Run {
	t.Helper()
	runs, err := src.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Run{}
	for _, r := range runs {
		out[r.ID] = r
	}
	return out
}

func TestFixtureRunsAndTree(t *testing.T) {
	src := open(t, fixtures(t))
	runs := runsByID(t, src)
	if len(runs) != 3 {
		t.Fatalf("runs %v, want the parent, its sub-agent and the three-step run", runs)
	}
	// The child names its parent in session_meta.parent_thread_id and
	// source.subagent.thread_spawn (codex-rs/protocol SessionSource::SubAgent).
	parent, child, steps3 := runs[parentID], runs[childID], runs[steps3ID]
	if child.ParentID != parentID || child.Depth != 1 || !parent.IsRoot() || !steps3.IsRoot() {
		t.Errorf("tree: child parent %q depth %d; parent's parent %q; steps3's %q", child.ParentID, child.Depth, parent.ParentID, steps3.ParentID)
	}
	if parent.Goal != "Delegate to a sub-agent. [[mock:sub,delay=1]]" || child.Goal != "Run one shell command. [[mock:steps=1,cmd=echo_from_sub]]" {
		t.Errorf("goals %q, %q: want the prompts, not the injected environment context", parent.Goal, child.Goal)
	}
	for _, r := range runs {
		if r.Status != store.StatusCompleted || r.Outcome != store.OutcomeComplete || r.Summary == nil || !r.Summary.Success {
			t.Errorf("run %s: status %q outcome %q summary %+v: every fixture run completed (task_complete)", r.ID, r.Status, r.Outcome, r.Summary)
		}
		if r.Provider != "mock/gpt-5-mock" || r.Workspace != "/home/dev/work/codex" {
			t.Errorf("run %s: provider %q workspace %q", r.ID, r.Provider, r.Workspace)
		}
	}
	if d := runs[steps3ID].Summary; d == nil || !d.HasDuration || d.Duration.Milliseconds() != 12613 {
		t.Errorf("steps3 summary %+v: want task_complete's duration_ms 12613", d)
	}
	if ro, why := src.ReadOnly(); !ro || why != codex.ReadOnlyReason {
		t.Errorf("ReadOnly %v %q", ro, why)
	}
	if _, err := src.Decide(context.Background(), store.Decision{}); err == nil || !strings.Contains(err.Error(), "vigil gate") {
		t.Errorf("Decide: %v, want a read-only refusal", err)
	}
	if reqs, err := src.Requests(context.Background(), false); err != nil || len(reqs) != 0 {
		t.Errorf("requests %v %v: the rollout records none", reqs, err)
	}
	evs, err := src.AgentEvents(context.Background(), parentID)
	if err != nil || len(evs) != 1 || evs[0].Kind != store.AgentSpawn || evs[0].ChildRunID != childID {
		t.Errorf("agent events %+v %v: want the spawn of %s", evs, err, childID)
	}
}

// rolloutFacts reads what a rollout says about usage, independently of the
// adapter: each token_usage_record's usage (codex-rs/protocol
// TokenUsageRecord, one per model response) and the last token_count's
// info.total_token_usage (TokenUsageInfo: total_token_usage is the
// thread's running sum, last_token_usage the newest response's).
type usageFigures struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Total      int64 `json:"total_tokens"`
}

func rolloutFacts(t *testing.T, path string) (records []usageFigures, lastTurn []usageFigures, cumulative int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type  string        `json:"type"`
				Usage *usageFigures `json:"usage"`
				Info  *struct {
					Total usageFigures `json:"total_token_usage"`
					Last  usageFigures `json:"last_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Type == "token_usage_record":
			records = append(records, *rec.Payload.Usage)
		case rec.Type == "event_msg" && rec.Payload.Type == "token_count" && rec.Payload.Info != nil:
			lastTurn = append(lastTurn, rec.Payload.Info.Last)
			cumulative = rec.Payload.Info.Total.Total
		}
	}
	return records, lastTurn, cumulative
}

func fixtureFile(t *testing.T, id string) string {
	m, _ := filepath.Glob(filepath.Join(fixtures(t), "*"+id+".jsonl"))
	if len(m) != 1 {
		t.Fatalf("fixture for %s: %v", id, m)
	}
	return m[0]
}

func TestFixtureStepsCallsAndTokens(t *testing.T) {
	ctx := context.Background()
	src := open(t, fixtures(t))
	steps, err := src.Steps(ctx, steps3ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4 model responses (three shell calls, the answer): %+v", len(steps), steps)
	}
	records, lastTurn, cumulative := rolloutFacts(t, fixtureFile(t, steps3ID))
	if len(records) != 4 || len(lastTurn) != 4 {
		t.Fatalf("the fixture has %d usage records and %d token counts", len(records), len(lastTurn))
	}
	var sum int64
	for i, st := range steps {
		if st.Number != i+1 || st.Tokens != records[i].Total || records[i] != lastTurn[i] {
			t.Errorf("step %d: number %d tokens %d; its usage record %+v, token_count last_token_usage %+v", i, st.Number, st.Tokens, records[i], lastTurn[i])
		}
		sum += st.Tokens
		d, err := src.StepDetail(ctx, steps3ID, st.RowID)
		if err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			want := "echo hi " + string(rune('1'+i))
			if len(d.Tools) != 1 || d.Tools[0].Name != "exec_command" || !strings.Contains(d.Tools[0].Arguments, want) ||
				!strings.Contains(d.Result, "hi "+string(rune('1'+i))) || st.Decision != "tool" {
				t.Errorf("step %d: tools %+v result %q decision %q: want %q with its output joined by call id", i+1, d.Tools, d.Result, st.Decision, want)
			}
		} else if d.TurnText != "All done after 3 tool call(s)." || st.Decision != "answer" {
			t.Errorf("last step: text %q decision %q", d.TurnText, st.Decision)
		}
		if len(d.ProviderCalls) != 1 {
			t.Fatalf("step %d: provider calls %+v", i+1, d.ProviderCalls)
		}
		pc, u := d.ProviderCalls[0], records[i]
		if *pc.PromptTokens != u.Input || *pc.CompletionTokens != u.Output || *pc.CacheReadTokens != u.Cached ||
			*pc.CacheWriteTokens != u.CacheWrite || *pc.TotalTokens != u.Total || pc.Model != "gpt-5-mock" {
			t.Errorf("step %d: provider call %+v, the record says %+v", i+1, pc, u)
		}
	}
	if sum != cumulative {
		t.Errorf("steps' tokens sum to %d; the last total_token_usage says %d", sum, cumulative)
	}
	st, err := src.RunStats(ctx, []string{steps3ID})
	if err != nil || st[steps3ID].Steps != 4 || st[steps3ID].Tokens != cumulative {
		t.Errorf("run stats %+v %v, want 4 steps and %d tokens", st, err, cumulative)
	}
	// The drift pane's figure is last_token_usage's total: what one request
	// put in the window (codex-rs/protocol TokenUsage::tokens_in_context_window).
	samples, err := src.ContextSamples(ctx, steps3ID)
	if err != nil || len(samples) != 4 {
		t.Fatalf("context samples %+v %v", samples, err)
	}
	for i, cs := range samples {
		if cs.Reported == nil || *cs.Reported != lastTurn[i].Total || !cs.NoEstimate || !strings.Contains(cs.Detail, "258400") {
			t.Errorf("sample %d: %+v, want reported %d of the 258400-token window", i, cs, lastTurn[i].Total)
		}
	}
}

func TestOpenOneRolloutAndDefaultPaths(t *testing.T) {
	src := open(t, fixtureFile(t, childID))
	runs := runsByID(t, src)
	if len(runs) != 1 || runs[childID].ParentID != parentID {
		t.Fatalf("one rollout opened: %+v", runs)
	}
	env := map[string]string{"HOME": "/home/u"}
	if got := codex.DefaultPaths(func(k string) string { return env[k] }); len(got) != 1 || got[0] != "/home/u/.codex/sessions" {
		t.Errorf("DefaultPaths with HOME: %v", got)
	}
	env["CODEX_HOME"] = "/srv/codex"
	if got := codex.DefaultPaths(func(k string) string { return env[k] }); len(got) != 1 || got[0] != "/srv/codex/sessions" {
		t.Errorf("DefaultPaths with CODEX_HOME: %v", got)
	}
	if codex.Detect(filepath.Join(fixtures(t), "exec-json-stdout.jsonl")) {
		t.Error("codex exec --json's stdout is not a rollout")
	}
}
