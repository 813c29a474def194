package views

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// FuzzRenderStep: a step, run and request whose every text field is
// arbitrary bytes, drawn by every pane. No ESC (so no CSI, OSC or DCS), no
// C0 or C1 control, no bidi control and no invalid UTF-8 from the data may
// reach the frame.
func FuzzRenderStep(f *testing.F) {
	for _, s := range []string{"\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\x9b31m", "\u202Egnp.exe", "\xff\xfe", "\x1bP+q544e\x1b\\", "a\nb\r\nc\td"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	sized := func(p Pane, w, h int) Pane { p.SetSize(w, h); return p }
	f.Fuzz(func(tt *testing.T, s string) {
		rep := int64(10)
		run := store.Run{ID: s, Goal: s, Outcome: store.Outcome(s), Status: store.StatusRunning, StartedAt: now, StatsKnown: true}
		step := store.Step{RowID: 1, RunID: s, Number: 1, Decision: s, ToolCall: s, Retries: []store.Retry{{RowID: 1, Decision: s}}}
		d := &store.StepDetail{Step: step, Prompt: s, Result: s, ToolCallFull: s, TurnText: s, HasTurnText: true,
			Observations: []store.Observation{{Kind: s, Target: s, Text: s}}, Edits: []store.Edit{{Tool: s, Path: s, Hunk: s}},
			ProviderCalls: []store.ProviderCall{{Provider: s, Model: s, Failure: s, FinishReason: s}},
			Policy: []store.PolicyEvent{{Kind: store.PolicyKind(s), Act: s, Target: s, Rule: s, Layer: s,
				Decision: store.PolicyVerdict(s), Source: s}},
			Citations:   []store.Citation{{URL: s, Title: s, CitedText: s}},
			ServerTools: []store.ServerToolCall{{Provider: s, Tool: s, Error: s}}}
		req := store.Request{Kind: store.Approval, ID: s, RunID: s, Act: s, Target: s, Content: s, HasContent: true}
		q := store.Request{Kind: store.Question, ID: "2", RunID: s, Question: s, Context: s, Choices: []string{s}}
		pl := store.Request{Kind: store.Plan, ID: "3", RunID: s, PlanSteps: []store.PlanStep{{Intent: s, Agent: s}}}

		runs := NewRuns(env)
		runs.SetItems([]RunItem{{Run: run, State: store.StateRunning, Tree: runmodel.Counts{Known: true}},
			{Run: run, State: store.StateFinished}}) // a finished run shows its outcome, the store's word
		tree := NewTree(env)
		node := &AgentNode{Run: run, State: store.StateWaiting, Own: runmodel.Counts{Known: true}, Marked: true, Waiting: 1,
			Todos: []store.Todo{{Text: s, State: store.TodoState(s)}}, Unread: 1, Processes: 1}
		ev := store.AgentEvent{Kind: store.AgentSpawnRefused, Detail: s}
		done := &AgentNode{Run: run, State: store.StateFinished}
		kids := func(id string) []string {
			if id == s {
				return []string{s + "/done"}
			}
			return nil
		}
		tree.SetTree(FlattenTree(s, map[string]*AgentNode{s: node, s + "/done": done}, kids, map[string][]store.AgentEvent{s: {ev}},
			map[string][]store.QueuedAgent{s: {{ParentID: s, Goal: s}}}), nil)
		var live []Doing
		for _, k := range []store.LiveKind{store.LiveModel, store.LiveTool, store.LiveRetry, store.LiveWaiting, store.LiveOther, store.LiveKind(s)} {
			if dg, ok := NowDoing([]store.RunEvent{{RunID: s, Kind: k, Name: s, Text: s, At: now}}); ok {
				live = append(live, dg)
			}
		}
		tree.SetLive(live)
		code := 2
		sum := NewSummary(env)
		sum.Set(&RunSummary{Run: run, State: store.StateRunning, Lease: &store.Lease{Owner: s, TTL: time.Minute}, LeaseHeldBy: s,
			Calls: d.ProviderCalls, Requests: []store.Request{req, q, pl, {Kind: store.Approval, Resolved: true, Decision: s, DecidedBy: s}},
			Facts: &store.RunFacts{Recorded: store.FactSet{store.FactCheckpoints: true, store.FactGates: true, store.FactGateAttempts: true,
				store.FactMemory: true, store.FactContextEvents: true, store.FactCitations: true, store.FactServerTools: true, store.FactFolds: true,
				store.FactTodos: true, store.FactQueue: true, store.FactMessages: true, store.FactProcesses: true, store.FactRunEvents: true,
				store.FactSandbox: true, store.FactMCP: true},
				Markers: []store.Marker{{Kind: s, Detail: s}}, GateFailures: []store.Tally{{Key: s, Count: 1}},
				GateAttempts: []store.GateAttempt{{Phase: s, Outcome: store.GateOutcome(s), Detail: s}},
				Memory:       []store.MemoryEntry{{Key: s, Value: s, Kind: s}}, Recalled: []string{s},
				ContextEvents: []store.ContextEvent{{Kind: s, Detail: s}}, Citations: d.Citations, ServerTools: d.ServerTools,
				Audit: []store.AuditEvent{{Source: s, Kind: s}}, Folds: []store.Fold{{Text: s}}, Todos: []store.Todo{{Text: s}},
				Queued: []store.QueuedAgent{{Goal: s}}, Messages: []store.AgentMessage{{FromName: s, FromID: s, Body: s}},
				Processes: []store.Process{{Line: s, Reason: s, Output: s, Code: &code, State: store.ProcessState(s)}},
				Stream:    1, LastEvent: &store.RunEvent{Name: s, Text: s}}})
		tl := NewTimeline(env)
		tl.Load(s, s, []store.Step{step}, true)
		det := NewDetail(env)
		det.Set(d)
		dr := NewDrift(env)
		dr.Set(s, []store.ContextSample{{Step: 1, Estimated: 5, Reported: &rep, Detail: s}, {Step: 2, Estimated: 5}})
		ap := NewApprovals(env)
		items := []ApprovalItem{{Req: req, Asker: s, Delivery: store.Deferred, Why: s}, {Req: q, Asker: s}, {Req: pl, Asker: s}}
		ap.SetItems(items, now)
		frames := []string{sized(runs, 100, 10).View(true), sized(tree, 80, 6).View(true), sized(tl, 100, 6).View(true),
			sized(det, 80, 60).View(true), sized(dr, 90, 8).View(true), sized(ap, 90, 20).View(true), sized(sum, 100, 200).View(true)}
		ap.Result(store.Decision{Key: req.Key()}, store.DecideResult{Decision: s, DecidedBy: s}, nil)
		frames = append(frames, ap.View(true))
		for _, fr := range frames {
			if !utf8.ValidString(fr) || !sanitize.Safe(fr) || strings.ContainsRune(fr, 0x1b) {
				tt.Fatalf("unsafe frame for %q:\n%q", s, fr)
			}
		}
	})
}
