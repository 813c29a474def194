package jaegertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/cli"
	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// Vigil runs `vigil ARGS…` in-process with the state directory stateDir
// and returns its exit code and output.
func Vigil(ctx context.Context, stateDir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := []string{"XDG_STATE_HOME=" + stateDir, "HOME=" + stateDir}
	code := cli.RunContext(ctx, args, strings.NewReader(""), &out, &errb, env)
	return code, out.String(), errb.String()
}

// Summary says what a checked export held, so a caller can require the
// shapes it meant to test.
type Summary struct {
	Traces, Agents, Calls, Tools int
	MaxDepth                     int // the deepest agent span nested under others (0: roots only)
	Events                       int // request events on agent spans
}

// want is one span the store says Jaeger must hold.
type want struct {
	trace, id, parent string
	name              string
	tags              map[string]any // attributes with the store's values
}

// Check exports the store at path to j (as service, with store id
// storeID) and checks, through Jaeger's query API, that every run, provider
// call and tool call the store holds is there as its span, nested as the
// agent tree is, with the store's numbers; that nothing else is; that a
// second export sends nothing; and that --resend sends the same spans again
// (Jaeger stores them twice and shows them once).
func Check(t testing.TB, j *Jaeger, path, service, storeID string) Summary {
	t.Helper()
	ctx := context.Background()
	state := t.TempDir()
	args := []string{"otel", "--store", path, "--endpoint", j.HTTPEndpoint(), "--service", service, "--store-id", storeID}
	code, out, errOut := Vigil(ctx, state, args...)
	if code != 0 {
		t.Fatalf("vigil %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	if !strings.HasPrefix(out, "sent ") {
		t.Errorf("vigil otel said %q, want a line starting \"sent \"", out)
	}
	wants, sum := expected(t, path, storeID)
	if len(wants) == 0 {
		t.Fatal("the store has nothing to export: not the store this check needs")
	}
	byTrace := map[string][]want{}
	expectedIDs := map[string]bool{}
	for _, w := range wants {
		expectedIDs[w.id] = true
		byTrace[w.trace] = append(byTrace[w.trace], w)
	}
	sum.Traces = len(byTrace)

	services := j.Services(t)
	if !contains(services, service) {
		t.Fatalf("Jaeger's services are %v: no %q", services, service)
	}
	if n := len(j.Traces(t, service)); n != len(byTrace) {
		t.Errorf("Jaeger finds %d traces of service %s, the store has %d root runs with spans", n, service, len(byTrace))
	}
	ids := otelexport.NewIDs(storeID)
	raw := map[string]int{}
	for trace, ws := range byTrace {
		tr := waitTrace(t, j, trace, len(ws))
		got := map[string]Span{}
		for _, s := range tr.Spans {
			if _, dup := got[s.SpanID]; dup {
				t.Errorf("trace %s: span %s (%s) is shown twice", trace, s.SpanID, s.OperationName)
			}
			got[s.SpanID] = s
		}
		for _, w := range ws {
			s, ok := got[w.id]
			if !ok {
				t.Errorf("trace %s: no span %s %q", trace, w.id, w.name)
				continue
			}
			delete(got, w.id)
			if s.OperationName != w.name {
				t.Errorf("span %s is named %q, want %q", w.id, s.OperationName, w.name)
			}
			if s.Parent() != w.parent {
				t.Errorf("span %s (%s): parent %q, want %q", w.id, w.name, s.Parent(), w.parent)
			}
			for k, v := range w.tags {
				g, ok := s.Tag(k)
				if !ok {
					t.Errorf("span %s (%s) has no %s (want %v)", w.id, w.name, k, v)
				} else if fmt.Sprint(g) != fmt.Sprint(v) {
					t.Errorf("span %s (%s): %s = %v, the store says %v", w.id, w.name, k, g, v)
				}
			}
			for _, warn := range s.Warnings {
				// Clock skew is Jaeger's note on a child that starts or ends
				// outside its parent (a store stamps in whole seconds); any
				// other warning is about the span vigil sent.
				// A parent that is not there is a run still going: its
				// span is sent when it ends.
				live := strings.HasPrefix(warn, "invalid parent span IDs") && !expectedIDs[w.parent]
				if !strings.HasPrefix(warn, "clock skew adjustment disabled") && !live {
					t.Errorf("span %s (%s): Jaeger warns %q", w.id, w.name, warn)
				}
			}
		}
		for id, s := range got {
			t.Errorf("trace %s holds span %s %q that the store does not account for", trace, id, s.OperationName)
		}
		for _, p := range tr.Processes {
			if p.ServiceName != service {
				t.Errorf("trace %s: service %q, want %q", trace, p.ServiceName, service)
			}
		}
		rt, _ := j.Trace(t, trace, true)
		raw[trace] = len(rt.Spans)
		if raw[trace] != len(ws) {
			t.Errorf("trace %s: Jaeger stored %d spans, want %d", trace, raw[trace], len(ws))
		}
	}
	_ = ids

	// Again: the ledger says the endpoint has it all; nothing is sent.
	code, out, errOut = Vigil(ctx, state, args...)
	if code != 0 || !strings.HasPrefix(out, "nothing new to send") {
		t.Errorf("a second export: exit %d, %q %q; want exit 0 and \"nothing new to send …\"", code, out, errOut)
	}
	// --resend: the same ids and the same content, so Jaeger, which
	// stores every write, shows each span once.
	code, out, errOut = Vigil(ctx, state, append(args, "--resend")...)
	if code != 0 || !strings.HasPrefix(out, "sent ") {
		t.Errorf("--resend: exit %d, %q %q", code, out, errOut)
	}
	for trace, ws := range byTrace {
		deadline := time.Now().Add(5 * time.Second)
		for {
			rt, _ := j.Trace(t, trace, true)
			if len(rt.Spans) >= 2*len(ws) || time.Now().After(deadline) {
				if len(rt.Spans) != 2*len(ws) {
					t.Errorf("trace %s after --resend: Jaeger stored %d spans, want %d (each twice)", trace, len(rt.Spans), 2*len(ws))
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		tr, _ := j.Trace(t, trace, false)
		if len(tr.Spans) != len(ws) {
			t.Errorf("trace %s after --resend: Jaeger shows %d spans, want %d: a re-sent span differs from the first", trace, len(tr.Spans), len(ws))
		}
	}
	return sum
}

// waitTrace waits until Jaeger holds at least n spans of the trace.
func waitTrace(t testing.TB, j *Jaeger, id string, n int) Trace {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr, ok := j.Trace(t, id, false)
		if ok && len(tr.Spans) >= n || time.Now().After(deadline) {
			if !ok {
				t.Fatalf("Jaeger has no trace %s", id)
			}
			return tr
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// expected reads the store directly and says which spans an export of it
// makes: an invoke_agent span per run that has ended, under its parent's;
// a chat span per provider attempt of a committed step (or of a run that
// has ended); an execute_tool span per tool call of a committed turn.
func expected(t testing.TB, path, storeID string) ([]want, Summary) {
	t.Helper()
	ctx := context.Background()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	md, err := runmodel.Load(ctx, src, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ids := otelexport.NewIDs(storeID)
	var out []want
	var sum Summary
	reqs, err := src.Requests(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]int{}
	for _, q := range reqs {
		asked[q.RunID]++
	}
	for _, id := range md.Newest() {
		r, _ := md.Run(id)
		root, parent := md.RootOf(id), md.Parent(id)
		trace := ids.Trace(root).String()
		conv := ids.Conversation(root)
		agent := ids.Agent(id).String()
		ended := store.StateOf(r, nil, false, false, time.Time{}) == store.StateFinished
		if ended {
			w := want{trace: trace, id: agent, name: "invoke_agent run " + store.DisplayID(id),
				tags: map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": id, "gen_ai.conversation.id": conv}}
			if parent != "" {
				w.parent = ids.Agent(parent).String()
				w.tags["vigil.run.parent_id"] = parent
			}
			if r.Summary != nil {
				w.tags["vigil.agent.tokens"] = r.Summary.Tokens
				w.tags["vigil.agent.steps"] = r.Summary.Steps
			} else if own := md.Agent(id); own.Known {
				w.tags["vigil.agent.tokens"] = own.Tokens
			}
			if r.Outcome != "" {
				w.tags["vigil.run.outcome"] = string(r.Outcome)
			}
			out = append(out, w)
			sum.Agents++
			sum.Events += asked[id]
			if depth := nestedDepth(md, id); depth > sum.MaxDepth {
				sum.MaxDepth = depth
			}
		}
		steps, err := src.Steps(ctx, id)
		var se *store.Error
		if errors.As(err, &se) {
			continue // a run the store cannot read: only its own span goes
		}
		if err != nil {
			t.Fatal(err)
		}
		committed := map[int]bool{}
		for _, st := range steps {
			if st.Pending {
				continue
			}
			committed[st.Number] = true
			if st.ToolCall == "" {
				continue
			}
			d, err := src.StepDetail(ctx, id, st.RowID)
			if err != nil {
				t.Fatal(err)
			}
			for i, tc := range d.Tools {
				w := want{trace: trace, id: ids.Tool(id, st.RowID, i).String(), parent: agent, name: "execute_tool " + tc.Name,
					tags: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tc.Name,
						"vigil.step.number": st.Number, "gen_ai.conversation.id": conv}}
				if tc.ID != "" {
					w.tags["gen_ai.tool.call.id"] = tc.ID
				}
				out = append(out, w)
				sum.Tools++
			}
		}
		calls, err := src.ProviderCalls(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if !committed[c.Step] && !ended {
				continue
			}
			name := "chat"
			if c.Model != "" {
				name += " " + c.Model
			}
			w := want{trace: trace, id: ids.Call(id, c.RowID).String(), parent: agent, name: name,
				tags: map[string]any{"gen_ai.operation.name": "chat", "vigil.step.number": c.Step, "gen_ai.conversation.id": conv}}
			for k, v := range map[string]*int64{"gen_ai.usage.input_tokens": c.PromptTokens, "gen_ai.usage.output_tokens": c.CompletionTokens,
				"gen_ai.usage.cache_read.input_tokens": c.CacheReadTokens, "gen_ai.usage.cache_creation.input_tokens": c.CacheWriteTokens} {
				if v != nil {
					w.tags[k] = *v
				}
			}
			if c.Model != "" {
				w.tags["gen_ai.request.model"] = c.Model
			}
			out = append(out, w)
			sum.Calls++
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].id < out[k].id })
	return out, sum
}

// nestedDepth is how many agent spans nest above run id's: its ancestors
// that have ended, up to the first that has not.
func nestedDepth(md *runmodel.Model, id string) int {
	n := 0
	for p := md.Parent(id); p != ""; p = md.Parent(p) {
		r, _ := md.Run(p)
		if store.StateOf(r, nil, false, false, time.Time{}) != store.StateFinished {
			break
		}
		n++
	}
	return n
}
