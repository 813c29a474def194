package otelexport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// tree is a small io-harness store built for the mapping's tests: a root,
// a child and a grandchild, each with steps, provider attempts (one failed
// and retried), tool calls, context samples, and one request of each kind,
// decided.
type tree struct {
	path               string
	root, child, grand string
	approval, question string
	plan               string
	live               string // a root still running, with one committed step
	liveChild          string // its child, finished
	w                  *harness.Store
}

func buildTree(t *testing.T) *tree {
	t.Helper()
	ctx := context.Background()
	tr := &tree{path: filepath.Join(t.TempDir(), "runs.sqlite3")}
	w, err := harness.Create(tr.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	tr.w = w
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	step := func(run string, n int, tool, args string, prompt, completion int64, est, reported int64) {
		t.Helper()
		total := prompt + completion
		must(w.RecordContextEvent(ctx, run, n, harness.ContextAssembled, "carried=0", ptr(est)))
		must(w.RecordProviderCall(ctx, run, store.ProviderCall{Step: n, Attempt: 0, Provider: "anthropic", Model: "claude-sonnet",
			PromptTokens: ptr(prompt), CompletionTokens: ptr(completion), TotalTokens: ptr(total), CacheReadTokens: ptr(int64(40)),
			LatencyMS: 800, FinishReason: "tool_use"}))
		must(w.RecordContextReported(ctx, run, n, reported))
		must(w.CheckpointStep(ctx, run, harness.StepRecord{Step: n, Decision: "did " + tool, Result: "[ok " + tool + "]",
			Prompt: "PROMPT-" + run, ToolCall: tool + ":" + args, Tokens: total,
			Turn: &harness.Turn{Text: ptr("TURN-" + run), Calls: []harness.ToolCall{{Name: tool, Arguments: json.RawMessage(args)}}}}))
	}
	var err2 error
	tr.root, err2 = w.StartRun(ctx, "Cut the release\nwith every check green", "/work")
	must(err2)
	must(w.SetProvider(ctx, tr.root, "anthropic"))
	// Step 1: a failed attempt, retried.
	must(w.RecordProviderCall(ctx, tr.root, store.ProviderCall{Step: 1, Attempt: 0, Provider: "anthropic", Model: "claude-sonnet",
		LatencyMS: 300, Failure: "Server (HTTP 529) overloaded"}))
	must(w.RecordRetry(ctx, tr.root, 1, 1, "retry", 0, "Server (HTTP 529) overloaded"))
	step(tr.root, 1, "read_file", `{"path":"RELEASING.md"}`, 900, 120, 800, 1020)
	tr.child, err2 = w.StartChildRun(ctx, "Fix the parser", "/work", tr.root, 1)
	must(err2)
	step(tr.root, 2, "spawn_agent", `{"goal":"Fix the parser"}`, 1100, 90, 1000, 1190)
	step(tr.child, 1, "exec", `{"program":"go","args":["test"]}`, 700, 200, 650, 900)
	tr.grand, err2 = w.StartChildRun(ctx, "Check go.mod", "/work", tr.child, 2)
	must(err2)
	step(tr.grand, 1, "grep", `{"pattern":"replace"}`, 500, 60, 540, 560)
	tr.plan, err2 = w.PutPlan(ctx, tr.grand, 2, []store.PlanStep{{Intent: "drop the replace line"}, {Intent: "run go mod tidy"}})
	must(err2)
	_, err2 = w.DecidePlan(ctx, tr.plan, store.VerdictApprove, "", "alice")
	must(err2)
	step(tr.grand, 2, "edit_file", `{"path":"go.mod"}`, 520, 80, 560, 600)
	must(w.FinishRun(ctx, tr.grand, store.OutcomeSuccess))
	tr.question, err2 = w.PutQuestion(ctx, tr.child, 2, "Keep the replace line?", "CI cannot see it", []string{"keep", "drop"})
	must(err2)
	_, err2 = w.AnswerQuestion(ctx, tr.question, "drop it", "bob")
	must(err2)
	step(tr.child, 3, "edit_file", `{"path":"parse.go"}`, 760, 150, 700, 910)
	must(w.FinishRun(ctx, tr.child, store.OutcomeSuccess))
	tr.approval, err2 = w.PutPending(ctx, tr.root, 3, "write", "CHANGELOG.md", ptr("## 2.0\n"))
	must(err2)
	_, err2 = w.ResolvePending(ctx, tr.approval, store.VerdictApprove)
	must(err2)
	step(tr.root, 3, "write_file", `{"path":"CHANGELOG.md"}`, 1200, 300, 1100, 1500)
	must(w.FinishRun(ctx, tr.root, store.OutcomeSuccess))

	tr.live, err2 = w.StartRun(ctx, "Still going", "/work")
	must(err2)
	step(tr.live, 1, "list_dir", `{"path":"."}`, 300, 30, 280, 330)
	tr.liveChild, err2 = w.StartChildRun(ctx, "A finished helper", "/work", tr.live, 1)
	must(err2)
	step(tr.liveChild, 1, "read_file", `{"path":"x"}`, 200, 20, 190, 220)
	must(w.FinishRun(ctx, tr.liveChild, store.OutcomeStepCapReached))
	return tr
}

func ptr[T any](v T) *T { return &v }

// export runs an export of the tree to an in-memory exporter.
func export(t *testing.T, path string, o otelexport.Options) []tracetest.SpanStub {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	mem := tracetest.NewInMemoryExporter()
	o.Source, o.Exporter, o.Endpoint = src, mem, "memory"
	if o.StoreID == "" {
		o.StoreID = "test:tree"
	}
	if _, err := otelexport.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return mem.GetSpans()
}

func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, a := range s.Attributes {
		m[string(a.Key)] = a.Value
	}
	return m
}

func byID(spans []tracetest.SpanStub) map[string]tracetest.SpanStub {
	m := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		m[s.SpanContext.SpanID().String()] = s
	}
	return m
}

// TestSpanTree: span names and parents mirror the agent tree — a trace
// per root, the child's invoke_agent span under the root's, the
// grandchild's under the child's, each run's chat and execute_tool spans
// under its own; a run still going has no span of its own yet, but its
// committed steps and its finished child are there.
func TestSpanTree(t *testing.T) {
	tr := buildTree(t)
	spans := export(t, tr.path, otelexport.Options{})
	ids := otelexport.NewIDs("test:tree")
	got := byID(spans)
	agent := func(run string) tracetest.SpanStub {
		t.Helper()
		s, ok := got[ids.Agent(run).String()]
		if !ok {
			t.Fatalf("no invoke_agent span for run %s", run)
		}
		return s
	}
	for _, c := range []struct{ run, parent, root string }{
		{tr.root, "", tr.root}, {tr.child, tr.root, tr.root}, {tr.grand, tr.child, tr.root}, {tr.liveChild, tr.live, tr.live},
	} {
		s := agent(c.run)
		if want := "invoke_agent run " + c.run; s.Name != want {
			t.Errorf("run %s: span %q, want %q", c.run, s.Name, want)
		}
		if s.SpanContext.TraceID() != ids.Trace(c.root) {
			t.Errorf("run %s: trace %s, want its root's %s", c.run, s.SpanContext.TraceID(), ids.Trace(c.root))
		}
		switch {
		case c.parent == "" && s.Parent.IsValid():
			t.Errorf("root %s has a parent span", c.run)
		case c.parent != "" && s.Parent.SpanID() != ids.Agent(c.parent):
			t.Errorf("run %s: parent span %s, want run %s's %s", c.run, s.Parent.SpanID(), c.parent, ids.Agent(c.parent))
		}
		if s.SpanKind.String() != "internal" {
			t.Errorf("run %s: kind %s", c.run, s.SpanKind)
		}
	}
	if _, ok := got[ids.Agent(tr.live).String()]; ok {
		t.Errorf("run %s is still going, yet its span was sent", tr.live)
	}
	// Every other span hangs under its run's agent span, in its run's trace.
	names := map[string][]string{}
	for _, s := range spans {
		a := attrs(s)
		if a["gen_ai.conversation.id"].AsString() == "" {
			t.Errorf("span %q has no gen_ai.conversation.id", s.Name)
		}
		run := a["vigil.run.id"].AsString()
		if strings.HasPrefix(s.Name, "invoke_agent") {
			continue
		}
		if s.Parent.SpanID() != ids.Agent(run) {
			t.Errorf("span %q of run %s: parent %s, want %s", s.Name, run, s.Parent.SpanID(), ids.Agent(run))
		}
		names[run] = append(names[run], s.Name)
	}
	want := map[string][]string{
		tr.root:      {"chat claude-sonnet", "chat claude-sonnet", "chat claude-sonnet", "chat claude-sonnet", "execute_tool read_file", "execute_tool spawn_agent", "execute_tool write_file"},
		tr.child:     {"chat claude-sonnet", "chat claude-sonnet", "execute_tool edit_file", "execute_tool exec"},
		tr.grand:     {"chat claude-sonnet", "chat claude-sonnet", "execute_tool edit_file", "execute_tool grep"},
		tr.live:      {"chat claude-sonnet", "execute_tool list_dir"},
		tr.liveChild: {"chat claude-sonnet", "execute_tool read_file"},
	}
	for run, w := range want {
		g := names[run]
		sortStrings(g)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("run %s: spans %q, want %q", run, g, w)
		}
	}
	if n := len(spans); n != 4+7+4+4+2+2 {
		t.Errorf("%d spans, want %d", n, 4+7+4+4+2+2)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestTokens: a chat span's usage attributes are the store's numbers for
// that attempt; a failed attempt is an error with its class; an agent
// span's vigil.agent.tokens and steps are the run's own.
func TestTokens(t *testing.T) {
	tr := buildTree(t)
	spans := export(t, tr.path, otelexport.Options{})
	got := byID(spans)
	ids := otelexport.NewIDs("test:tree")
	src, err := store.Open(tr.path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	failed := 0
	for _, run := range []string{tr.root, tr.child, tr.grand} {
		calls, err := src.ProviderCalls(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			s, ok := got[ids.Call(run, c.RowID).String()]
			if !ok {
				t.Errorf("run %s: no span for provider call %d", run, c.RowID)
				continue
			}
			a := attrs(s)
			check := func(k string, v *int64) {
				t.Helper()
				if v == nil {
					if _, has := a[k]; has {
						t.Errorf("call %d: %s = %v, the store has none", c.RowID, k, a[k].Emit())
					}
					return
				}
				if a[k].AsInt64() != *v {
					t.Errorf("call %d: %s = %d, the store says %d", c.RowID, k, a[k].AsInt64(), *v)
				}
			}
			check("gen_ai.usage.input_tokens", c.PromptTokens)
			check("gen_ai.usage.output_tokens", c.CompletionTokens)
			check("gen_ai.usage.cache_read.input_tokens", c.CacheReadTokens)
			if a["gen_ai.provider.name"].AsString() != "anthropic" || a["gen_ai.request.model"].AsString() != "claude-sonnet" {
				t.Errorf("call %d: provider %q model %q", c.RowID, a["gen_ai.provider.name"].AsString(), a["gen_ai.request.model"].AsString())
			}
			if a["vigil.step.number"].AsInt64() != int64(c.Step) {
				t.Errorf("call %d: step %d, want %d", c.RowID, a["vigil.step.number"].AsInt64(), c.Step)
			}
			if c.Failure != "" {
				failed++
				if s.Status.Code != codes.Error || a["error.type"].AsString() != "529" {
					t.Errorf("failed attempt: status %v, error.type %q", s.Status, a["error.type"].AsString())
				}
			} else {
				if s.Status.Code != codes.Unset {
					t.Errorf("call %d: status %v", c.RowID, s.Status)
				}
				if got := a["gen_ai.response.finish_reasons"].AsStringSlice(); !reflect.DeepEqual(got, []string{"tool_use"}) {
					t.Errorf("call %d: finish reasons %q", c.RowID, got)
				}
				if _, ok := a["vigil.context.reported_tokens"]; !ok {
					t.Errorf("call %d: no context sample", c.RowID)
				}
			}
			if !s.EndTime.After(s.StartTime) {
				t.Errorf("call %d: span %s–%s has no duration", c.RowID, s.StartTime, s.EndTime)
			}
		}
		r, err := src.(store.RunGetter).Run(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		a := attrs(got[ids.Agent(run).String()])
		if a["vigil.agent.tokens"].AsInt64() != r.Summary.Tokens || a["vigil.agent.steps"].AsInt64() != int64(r.Summary.Steps) {
			t.Errorf("run %s: tokens %d steps %d, the store says %d and %d", run, a["vigil.agent.tokens"].AsInt64(),
				a["vigil.agent.steps"].AsInt64(), r.Summary.Tokens, r.Summary.Steps)
		}
		if a["vigil.run.outcome"].AsString() != "success" || !a["vigil.run.success"].AsBool() {
			t.Errorf("run %s: outcome %q success %v", run, a["vigil.run.outcome"].AsString(), a["vigil.run.success"].AsBool())
		}
	}
	if failed != 1 {
		t.Errorf("%d failed attempts seen, want 1", failed)
	}
	// The root's context drift: the samples summed.
	a := attrs(got[ids.Agent(tr.root).String()])
	if a["vigil.context.estimated_tokens"].AsInt64() != 800+1000+1100 || a["vigil.context.reported_tokens"].AsInt64() != 1020+1190+1500 {
		t.Errorf("root drift: est %d rep %d", a["vigil.context.estimated_tokens"].AsInt64(), a["vigil.context.reported_tokens"].AsInt64())
	}
}

// TestRequestEvents: approvals, questions and plans are events on the
// asking run's span, with what was decided, by whom, and how long the run
// waited; their texts only with --content.
func TestRequestEvents(t *testing.T) {
	tr := buildTree(t)
	ids := otelexport.NewIDs("test:tree")
	for _, content := range []bool{false, true} {
		got := byID(export(t, tr.path, otelexport.Options{Content: content}))
		for _, c := range []struct {
			run, event, id, decision string
			texts                    []string
		}{
			{tr.root, "vigil.approval", tr.approval, "approve", []string{"vigil.request.target", "vigil.request.content"}},
			{tr.child, "vigil.question", tr.question, "answered", []string{"vigil.request.question", "vigil.request.answer"}},
			{tr.grand, "vigil.plan", tr.plan, "approve", []string{"vigil.request.plan"}},
		} {
			s := got[ids.Agent(c.run).String()]
			var found bool
			for _, ev := range s.Events {
				if ev.Name != c.event {
					continue
				}
				found = true
				a := map[string]attribute.Value{}
				for _, x := range ev.Attributes {
					a[string(x.Key)] = x.Value
				}
				if a["vigil.request.id"].AsString() != c.id || a["vigil.request.decision"].AsString() != c.decision {
					t.Errorf("%s %s: id %q decision %q, want %q %q", c.event, c.id, a["vigil.request.id"].AsString(),
						a["vigil.request.decision"].AsString(), c.id, c.decision)
				}
				if w, ok := a["vigil.request.wait_ms"]; !ok || w.AsInt64() < 0 {
					t.Errorf("%s: wait %v", c.event, a["vigil.request.wait_ms"].Emit())
				}
				for _, k := range c.texts {
					if _, has := a[k]; has != content {
						t.Errorf("%s (content %v): %s present %v", c.event, content, k, has)
					}
				}
				if content && c.event == "vigil.question" && a["vigil.request.answer"].AsString() != "drop it" {
					t.Errorf("answer %q", a["vigil.request.answer"].AsString())
				}
				if c.event == "vigil.plan" && a["vigil.request.plan_steps"].AsInt64() != 2 {
					t.Errorf("plan steps %d", a["vigil.request.plan_steps"].AsInt64())
				}
			}
			if !found {
				t.Errorf("run %s: no %s event", c.run, c.event)
			}
		}
	}
}

// TestContentOnlyWhenAsked: without --content no prompt, model output,
// tool argument, result or goal leaves; with it, they do, the messages
// in the conventions' JSON form.
func TestContentOnlyWhenAsked(t *testing.T) {
	tr := buildTree(t)
	secrets := []string{"PROMPT-", "TURN-", "RELEASING.md", "Cut the release", "[ok ", "CHANGELOG.md", "## 2.0", "Keep the replace", "drop it", "did "}
	dump := func(spans []tracetest.SpanStub) string {
		var b strings.Builder
		for _, s := range spans {
			b.WriteString(s.Name + "\n")
			for _, a := range s.Attributes {
				fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.Emit())
			}
			for _, ev := range s.Events {
				for _, a := range ev.Attributes {
					fmt.Fprintf(&b, "%s=%s\n", a.Key, a.Value.Emit())
				}
			}
		}
		return b.String()
	}
	plain := dump(export(t, tr.path, otelexport.Options{}))
	for _, s := range secrets {
		if strings.Contains(plain, s) {
			t.Errorf("without --content, %q left the store", s)
		}
	}
	spans := export(t, tr.path, otelexport.Options{Content: true})
	full := dump(spans)
	for _, s := range secrets {
		if !strings.Contains(full, s) {
			t.Errorf("with --content, %q is not in any span", s)
		}
	}
	ids := otelexport.NewIDs("test:tree")
	root := byID(spans)[ids.Agent(tr.root).String()]
	if root.Name != "invoke_agent Cut the release" {
		t.Errorf("with --content the root's span is %q, want the goal's first line", root.Name)
	}
	for _, s := range spans {
		a := attrs(s)
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages"} {
			if v, ok := a[k]; ok {
				var msgs []struct {
					Role  string           `json:"role"`
					Parts []map[string]any `json:"parts"`
				}
				if err := json.Unmarshal([]byte(v.AsString()), &msgs); err != nil || len(msgs) != 1 || len(msgs[0].Parts) == 0 {
					t.Errorf("%s %s is not a message list: %v %s", s.Name, k, err, v.AsString())
				}
			}
		}
	}
}

// TestStableIDs: two exports of one store make the same spans, id for id
// and value for value; another store identity makes other ids.
func TestStableIDs(t *testing.T) {
	tr := buildTree(t)
	a := export(t, tr.path, otelexport.Options{Content: true})
	b := export(t, tr.path, otelexport.Options{Content: true})
	if len(a) != len(b) {
		t.Fatalf("%d spans, then %d", len(a), len(b))
	}
	bb := byID(b)
	for _, s := range a {
		o, ok := bb[s.SpanContext.SpanID().String()]
		if !ok {
			t.Errorf("span %q %s is not in the second export", s.Name, s.SpanContext.SpanID())
			continue
		}
		if s.Name != o.Name || !s.SpanContext.Equal(o.SpanContext) || !s.Parent.Equal(o.Parent) || !s.StartTime.Equal(o.StartTime) ||
			!s.EndTime.Equal(o.EndTime) || !reflect.DeepEqual(s.Attributes, o.Attributes) || !reflect.DeepEqual(s.Events, o.Events) {
			t.Errorf("span %q differs between two exports", s.Name)
		}
	}
	other := byID(export(t, tr.path, otelexport.Options{StoreID: "another store"}))
	for id := range bb {
		if _, ok := other[id]; ok {
			t.Errorf("span id %s is the same for two store identities", id)
		}
	}
}

// TestLedger: an export records what the endpoint took; the next export
// sends nothing, --resend everything again, and two exports cannot hold
// one ledger at once.
func TestLedger(t *testing.T) {
	tr := buildTree(t)
	dir := t.TempDir()
	open := func() *otelexport.Ledger {
		l, err := otelexport.OpenLedger(dir, "test:tree", "memory", "vigil")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := open()
	first := export(t, tr.path, otelexport.Options{Ledger: l})
	if _, err := otelexport.OpenLedger(dir, "test:tree", "memory", "vigil"); err == nil || !strings.Contains(err.Error(), "another vigil otel") {
		t.Errorf("a second holder of the ledger: %v", err)
	}
	l.Close()
	// The file names what it is about, without credentials.
	cred, err := otelexport.OpenLedger(dir, "test:tree", "http://user:secret@127.0.0.1:4318/v1/traces", "vigil")
	if err != nil {
		t.Fatal(err)
	}
	head, _ := os.ReadFile(cred.Path())
	cred.Close()
	if strings.Contains(string(head), "secret") || !strings.Contains(string(head), "127.0.0.1:4318") {
		t.Errorf("ledger header %q", head)
	}
	l = open()
	if again := export(t, tr.path, otelexport.Options{Ledger: l}); len(again) != 0 {
		t.Errorf("an export after a complete one sent %d spans", len(again))
	}
	resent := export(t, tr.path, otelexport.Options{Ledger: l, Resend: true})
	if len(resent) != len(first) {
		t.Errorf("--resend sent %d spans, the first export %d", len(resent), len(first))
	}
	l.Close()
	// The live run ends: only its own span is new.
	ctx := context.Background()
	if err := tr.w.FinishRun(ctx, tr.live, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	l = open()
	defer l.Close()
	more := export(t, tr.path, otelexport.Options{Ledger: l})
	if len(more) != 1 || more[0].SpanContext.SpanID() != otelexport.NewIDs("test:tree").Agent(tr.live) {
		var names []string
		for _, s := range more {
			names = append(names, s.Name)
		}
		t.Errorf("after the live run ended an export sent %q, want its invoke_agent span alone", names)
	}
}

// TestLedgerTornLine: a crash mid-append leaves a torn last line; the
// ledger reads the whole ids before it, ignores the torn one, and the next
// id lands on a line of its own.
func TestLedgerTornLine(t *testing.T) {
	dir := t.TempDir()
	ids := otelexport.NewIDs("s")
	l, err := otelexport.OpenLedger(dir, "s", "e", "v")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Add([]trace.SpanID{ids.Agent("1"), ids.Agent("2")}); err != nil {
		t.Fatal(err)
	}
	path := l.Path()
	l.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(ids.Agent("3").String()[:7])
	f.Close()
	l, err = otelexport.OpenLedger(dir, "s", "e", "v")
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 2 || !l.Has(ids.Agent("1")) || !l.Has(ids.Agent("2")) || l.Has(ids.Agent("3")) {
		t.Errorf("after a torn line the ledger holds %d ids", l.Len())
	}
	if err := l.Add([]trace.SpanID{ids.Agent("4")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = otelexport.OpenLedger(dir, "s", "e", "v")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Len() != 3 || !l.Has(ids.Agent("4")) {
		t.Errorf("the id after a torn line was not read back: %d ids", l.Len())
	}
}

// TestResolve: an http/protobuf base URL gets /v1/traces, a path that ends
// in it is kept, a traces URL from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// used as it is; a gRPC endpoint is its host and port.
func TestResolve(t *testing.T) {
	for _, c := range []struct {
		ep   otelexport.Endpoint
		want string
	}{
		{otelexport.Endpoint{URL: "http://127.0.0.1:4318", Protocol: otelexport.ProtocolHTTP}, "http://127.0.0.1:4318/v1/traces"},
		{otelexport.Endpoint{URL: "http://127.0.0.1:4318/", Protocol: otelexport.ProtocolHTTP}, "http://127.0.0.1:4318/v1/traces"},
		{otelexport.Endpoint{URL: "https://cloud.example/api/public/otel", Protocol: otelexport.ProtocolHTTP}, "https://cloud.example/api/public/otel/v1/traces"},
		{otelexport.Endpoint{URL: "https://x.example/v1/traces", Protocol: otelexport.ProtocolHTTP}, "https://x.example/v1/traces"},
		{otelexport.Endpoint{URL: "https://x.example/ingest", Protocol: otelexport.ProtocolHTTP, Exact: true}, "https://x.example/ingest"},
		{otelexport.Endpoint{URL: "http://127.0.0.1:4317", Protocol: otelexport.ProtocolGRPC}, "http://127.0.0.1:4317"},
	} {
		got, err := c.ep.Resolve()
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c.ep, got, err, c.want)
		}
	}
	if got := otelexport.Display("https://user:pw@x.example/v1/traces"); got != "https://x.example/v1/traces" {
		t.Errorf("Display shows %q", got)
	}
}

// flaky is an exporter whose first fail batches are refused: lost says the
// endpoint took them all the same (the reply was lost on the way back).
type flaky struct {
	*tracetest.InMemoryExporter
	fail, calls int
	lost        bool
}

func (f *flaky) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	f.calls++
	if f.calls <= f.fail {
		if f.lost {
			f.InMemoryExporter.ExportSpans(ctx, spans)
		}
		return fmt.Errorf("dial tcp 127.0.0.1:4318: connect: connection refused")
	}
	return f.InMemoryExporter.ExportSpans(ctx, spans)
}

func exportTo(t *testing.T, path string, exp sdktrace.SpanExporter, o otelexport.Options) (otelexport.Stats, string) {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var log strings.Builder
	o.Source, o.Exporter, o.Endpoint, o.StoreID, o.Log = src, exp, "memory", "test:tree", &log
	o.Backoff = func(int) time.Duration { return time.Millisecond }
	st, err := otelexport.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st, log.String()
}

// TestRefusedBatchIsSentAgain: a batch the exporter gives back untaken (a
// refused connection, which the OTLP/HTTP exporter does not retry) is sent
// again with back-off, one line each time, until the endpoint takes it;
// everything arrives, recorded through the SDK (its resource and scope).
func TestRefusedBatchIsSentAgain(t *testing.T) {
	tr := buildTree(t)
	want := export(t, tr.path, otelexport.Options{})
	f := &flaky{InMemoryExporter: tracetest.NewInMemoryExporter(), fail: 2}
	st, log := exportTo(t, tr.path, f, otelexport.Options{})
	if st.Retries != 2 || strings.Count(log, "retrying in") != 2 || !strings.Contains(log, "took the batch after 3 attempts") ||
		!strings.Contains(log, "connection refused") {
		t.Errorf("retries %d, log:\n%s", st.Retries, log)
	}
	got := f.GetSpans()
	if len(got) != len(want) || st.Spans != len(want) {
		t.Fatalf("%d spans arrived (%d counted), a clean export sends %d", len(got), st.Spans, len(want))
	}
	wantIDs := byID(want)
	for _, s := range got {
		if _, ok := wantIDs[s.SpanContext.SpanID().String()]; !ok {
			t.Errorf("span %q %s is not one a clean export sends", s.Name, s.SpanContext.SpanID())
		}
		if s.InstrumentationScope.Name != "github.com/vigil-run/vigil/otelexport" {
			t.Errorf("span %q scope %q", s.Name, s.InstrumentationScope.Name)
		}
		if v, ok := s.Resource.Set().Value("service.name"); !ok || v.AsString() != "vigil" {
			t.Errorf("span %q resource %v", s.Name, s.Resource)
		}
	}
}

// TestLostReplyIsSentAgainUnderTheSameIDs: at least once. A batch the
// endpoint took but whose reply was lost is sent again whole, under the
// same ids (a backend can keep one), and the ledger holds each id once.
func TestLostReplyIsSentAgainUnderTheSameIDs(t *testing.T) {
	tr := buildTree(t)
	l, err := otelexport.OpenLedger(t.TempDir(), "test:tree", "memory", "vigil")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := &flaky{InMemoryExporter: tracetest.NewInMemoryExporter(), fail: 1, lost: true}
	st, _ := exportTo(t, tr.path, f, otelexport.Options{Ledger: l})
	got := f.GetSpans()
	if len(got) != 2*st.Spans {
		t.Fatalf("%d spans arrived for %d sent: want each twice", len(got), st.Spans)
	}
	seen := map[string]int{}
	for _, s := range got {
		seen[s.SpanContext.SpanID().String()]++
	}
	for id, n := range seen {
		if n != 2 {
			t.Errorf("span %s arrived %d times", id, n)
		}
	}
	for _, s := range got[:st.Spans] {
		if !l.Has(s.SpanContext.SpanID()) {
			t.Errorf("span %s not in the ledger", s.SpanContext.SpanID())
		}
	}
}

// TestEndpointDownThenUp: the real OTLP/HTTP exporter against an endpoint
// that refuses connections at first (which the exporter's own retry does
// not retry): the export says so once a try and delivers everything once
// the endpoint comes up.
func TestEndpointDownThenUp(t *testing.T) {
	tr := buildTree(t)
	want := len(export(t, tr.path, otelexport.Options{}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down
	exp, err := otelexport.NewExporter(context.Background(), otelexport.Endpoint{URL: "http://" + addr, Protocol: otelexport.ProtocolHTTP})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	var posts atomic.Int64
	up := make(chan *http.Server, 1)
	log := &lockedLog{}
	go func() {
		for strings.Count(log.String(), "retrying in") < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			up <- nil
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if b, _ := io.ReadAll(r.Body); r.URL.Path == "/v1/traces" && len(b) > 0 {
				posts.Add(1)
			}
			w.WriteHeader(http.StatusOK)
		})}
		go srv.Serve(l)
		up <- srv
	}()
	src, err := store.Open(tr.path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st, err := otelexport.Run(context.Background(), otelexport.Options{Source: src, StoreID: "test:tree", Exporter: exp,
		Endpoint: "http://" + addr + "/v1/traces", Log: log, RetryFor: 30 * time.Second,
		Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
	if srv := <-up; srv != nil {
		defer srv.Close()
	}
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, log)
	}
	if st.Spans != want || posts.Load() == 0 {
		t.Errorf("%d spans sent in %d posts, want %d", st.Spans, posts.Load(), want)
	}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(line, "retrying in") && !strings.Contains(line, "connection refused") {
			t.Errorf("retry line %q does not say what failed", line)
		}
	}
	if !strings.Contains(log.String(), "took the batch after") {
		t.Errorf("no line saying the endpoint took the batch in the end:\n%s", log)
	}
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
