package hostile

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// BuildIOHarness writes an io-harness store into dir with one root run per
// corpus string, that string in every text field of every kind of row
// (goal, workspace, provider, each step's decision, tool call, result,
// prompt and turn text, context details, observations, edits, policy and
// agent events, provider calls, approvals, questions and plans) and as the
// outcome of a finished child; every other root is live, its lease this
// process's. It returns the path.
func BuildIOHarness(dir string) (string, error) {
	path := filepath.Join(dir, "hostile.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		return "", err
	}
	defer w.Close()
	ctx := context.Background()
	var first error
	must := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	id := func(id string, err error) string {
		must(err)
		return id
	}
	for i, s := range Corpus() {
		root := id(w.StartRun(ctx, s, s))
		must(w.SetProvider(ctx, root, s))
		if i%2 == 0 {
			_, err := w.AcquireLease(ctx, root, time.Hour)
			must(err)
		}
		rep := int64(100 + i)
		must(w.RecordContextEvent(ctx, root, 1, harness.ContextAssembled, s, &rep))
		must(w.CheckpointStep(ctx, root, harness.StepRecord{Step: 1, Decision: s, ToolCall: s, Result: s + "\n" + s, Prompt: s,
			Tokens: 10, Turn: &harness.Turn{Text: &s}}))
		must(w.RecordRetry(ctx, root, 2, 1, s, time.Second, s))
		must(w.CheckpointStep(ctx, root, harness.StepRecord{Step: 2, Decision: s, ToolCall: s, Result: s, Tokens: 20}))
		must(w.RecordObservations(ctx, root, []store.Observation{{Step: 1, Kind: s, Target: s, Text: s}}))
		must(w.RecordEdit(ctx, root, 1, store.Edit{Tool: s, Path: s, Hunk: s}))
		must(w.RecordPolicyEvent(ctx, store.PolicyEvent{RunID: root, Step: 1, Kind: store.PolicyRefusal, Act: s, Target: s, Rule: s, Layer: s}))
		must(w.RecordAgentEvent(ctx, store.AgentEvent{RunID: root, Step: 1, Kind: store.AgentSpawnRefused, Detail: s}))
		must(w.RecordProviderCall(ctx, root, store.ProviderCall{Step: 1, Provider: s, Model: s, Failure: s, FinishReason: s}))
		_, err := w.PutPending(ctx, root, 2, "write", s, &s)
		must(err)
		_, err = w.PutQuestion(ctx, root, 2, s, s, []string{s, s})
		must(err)
		_, err = w.PutPlan(ctx, root, 2, []store.PlanStep{{Intent: s, Agent: s}})
		must(err)
		child := id(w.StartChildRun(ctx, fmt.Sprint("child ", i, s), s, root, 1))
		must(w.CheckpointStep(ctx, child, harness.StepRecord{Step: 1, Decision: s, ToolCall: s, Result: s, Tokens: 5}))
		must(w.FinishRun(ctx, child, store.Outcome(s)))
		if i%2 == 1 {
			must(w.FinishRun(ctx, root, store.Outcome(s)))
		}
	}
	return path, first
}
