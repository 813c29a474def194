package otelexport_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/cli"
	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/internal/testkit/jaegertest"
	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// finishedDemo plays the demo to its end at high speed, approving every
// approval and plan and answering the question as they come, and returns
// the store: history runs, a live tree that has finished (a coordinator,
// workers, a grandchild), decided requests of every kind.
func finishedDemo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.sqlite3")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ready := make(chan struct{})
	var wg sync.WaitGroup
	var decideErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		s, err := ioharness.Open(path)
		if err != nil {
			decideErr = err
			return
		}
		defer s.Close()
		for ctx.Err() == nil {
			reqs, err := s.Requests(ctx, true)
			if err != nil {
				if ctx.Err() == nil {
					decideErr = err
				}
				return
			}
			for _, q := range reqs {
				d := store.Decision{Key: q.Key(), Verdict: store.VerdictApprove}
				if q.Kind == store.Question {
					d = store.Decision{Key: q.Key(), Text: "Return ErrEmptyInput"}
				}
				if _, err := s.Decide(ctx, d); err != nil && ctx.Err() == nil {
					decideErr = err
					return
				}
			}
			time.Sleep(15 * time.Millisecond)
		}
	}()
	err := demo.Run(ctx, demo.Options{Path: path, Speed: 200, Seed: 7, Ready: func() { close(ready) }})
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	if decideErr != nil {
		t.Fatalf("deciding the demo's requests: %v", decideErr)
	}
	return path
}

// TestJaegerDemo: the finished demo store, exported to a real Jaeger over
// OTLP/HTTP, is there span for span as the store holds it: every run's
// invoke_agent span nested as the agent tree is (a grandchild three deep),
// a chat span per provider attempt with the store's token counts, an
// execute_tool span per tool call; exporting again sends nothing, and
// --resend sends the same spans, which Jaeger shows once.
func TestJaegerDemo(t *testing.T) {
	j := jaegertest.Start(t)
	path := finishedDemo(t)
	sum := jaegertest.Check(t, j, path, "vigil-demo", "test:demo")
	t.Logf("%+v", sum)
	if sum.MaxDepth < 2 || sum.Traces < 4 || sum.Tools == 0 || sum.Events < 3 {
		t.Fatalf("the demo store is not the one the check needs: %+v", sum)
	}
	// The request events: each decided, with how long its run waited.
	src := openStore(t, path)
	ids := otelexport.NewIDs("test:demo")
	reqs, err := src.Requests(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, q := range reqs {
		runs, _ := src.Runs(context.Background())
		root := rootOf(runs, q.RunID)
		tr, ok := j.Trace(t, ids.Trace(root).String(), false)
		if !ok {
			t.Fatalf("no trace for request %s", q.Key())
		}
		found := false
		for _, s := range tr.Spans {
			if s.SpanID != ids.Agent(q.RunID).String() {
				continue
			}
			for _, l := range s.Logs {
				f := map[string]any{}
				for _, x := range l.Fields {
					f[x.Key] = x.Value
				}
				if f["event"] == "vigil."+q.Kind.String() && f["vigil.request.id"] == q.ID {
					found = true
					if _, ok := f["vigil.request.wait_ms"]; !ok {
						t.Errorf("%s: no wait time: %v", q.Key(), f)
					}
					want := "answered"
					if q.Kind != store.Question {
						want = q.Decision
					}
					if f["vigil.request.decision"] != want {
						t.Errorf("%s: decision %v, want %q", q.Key(), f["vigil.request.decision"], want)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: no event on run %s's span", q.Key(), q.RunID)
		}
		seen[q.Kind.String()] = true
	}
	if len(seen) != 3 {
		t.Errorf("the demo asked %v; want approvals, questions and plans", seen)
	}
}

func openStore(t *testing.T, path string) store.Source {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func rootOf(runs []store.Run, id string) string {
	parent := map[string]string{}
	for _, r := range runs {
		parent[r.ID] = r.ParentID
	}
	return store.Ancestry(id, parent)[0]
}

// TestJaegerFollow: `vigil otel --follow` delivers a step committed after it
// started to Jaeger within 2 s of the commit, the run's own span when the
// run ends, and, started again, sends nothing it sent before.
func TestJaegerFollow(t *testing.T) {
	j := jaegertest.Start(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	run, err := w.StartRun(ctx, "follow me", "/work")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ids := otelexport.NewIDs("test:follow")
	traceID := ids.Trace(run).String()
	args := []string{"otel", "--follow", "--store", path, "--endpoint", j.GRPCEndpoint(), "--protocol", "grpc",
		"--service", "vigil-follow", "--store-id", "test:follow", run}

	commit := func(n int) time.Time {
		t.Helper()
		if err := w.RecordProviderCall(ctx, run, store.ProviderCall{Step: n, Provider: "anthropic", Model: "claude-sonnet",
			PromptTokens: ptr(int64(800 + n)), CompletionTokens: ptr(int64(100 + n)), TotalTokens: ptr(int64(900 + 2*n)),
			LatencyMS: 700, FinishReason: "tool_use"}); err != nil {
			t.Fatal(err)
		}
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: n, Decision: "read it", Result: "[ok]",
			ToolCall: `read_file:{"path":"a.go"}`, Tokens: int64(900 + 2*n),
			Turn: &harness.Turn{Calls: []harness.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a.go"}`)}}}}); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	calls := func() []store.ProviderCall {
		src := openStore(t, path)
		cs, err := src.ProviderCalls(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	type ended struct {
		code     int
		out, err string
	}
	done := make(chan ended, 1)
	// waitSpan waits for span id in the trace and says how long it took.
	waitSpan := func(id string, since time.Time, within time.Duration) time.Duration {
		t.Helper()
		for {
			tr, ok, err := j.TraceErr(ctx, traceID, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				for _, s := range tr.Spans {
					if s.SpanID == id {
						return time.Since(since)
					}
				}
			}
			if time.Since(since) > within {
				select {
				case r := <-done:
					t.Fatalf("vigil otel --follow ended: exit %d %q %q", r.code, r.out, r.err)
				default:
				}
				t.Fatalf("span %s not in Jaeger %s after the commit", id, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// One step before it starts: once that is sent, it is following.
	commit(1)
	fctx, stop := context.WithCancel(ctx)
	var stdout, stderr lockedBuffer
	go func() {
		code := cli.RunContext(fctx, args, strings.NewReader(""), &stdout, &stderr, []string{"XDG_STATE_HOME=" + state, "HOME=" + state})
		done <- ended{code, stdout.String(), stderr.String()}
	}()
	for !strings.Contains(stdout.String(), "sent 2 spans") {
		select {
		case r := <-done:
			t.Fatalf("vigil otel --follow ended: exit %d %q %q", r.code, r.out, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var worst time.Duration
	for n := 2; n <= 4; n++ {
		at := commit(n)
		cs := calls()
		lat := waitSpan(ids.Call(run, cs[len(cs)-1].RowID).String(), at, 2*time.Second)
		worst = max(worst, lat)
		t.Logf("step %d: commit → span in Jaeger in %s", n, lat.Round(time.Millisecond))
	}
	if err := w.FinishRun(ctx, run, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	lat := waitSpan(ids.Agent(run).String(), time.Now(), 5*time.Second)
	t.Logf("run end → invoke_agent span in Jaeger in %s; worst step %s", lat.Round(time.Millisecond), worst.Round(time.Millisecond))
	// With the run named, --follow ends once it has sent the run's span.
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("vigil otel --follow exited %d: %q %q", r.code, r.out, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("vigil otel --follow did not end after the run it follows ended")
	}
	stop()
	raw, _ := j.Trace(t, traceID, true)
	if want := 4 + 4 + 1; len(raw.Spans) != want {
		t.Errorf("Jaeger stored %d spans, want %d (4 chat, 4 execute_tool, 1 invoke_agent)", len(raw.Spans), want)
	}
	// Started again: the ledger has it all.
	code, out, errOut := jaegertest.Vigil(ctx, state, args...)
	if code != 0 {
		t.Fatalf("again: exit %d %q %q", code, out, errOut)
	}
	again, _ := j.Trace(t, traceID, true)
	if len(again.Spans) != len(raw.Spans) {
		t.Errorf("a restarted --follow sent %d spans again", len(again.Spans)-len(raw.Spans))
	}
}

// TestJaegerEndpointDown: with nothing listening yet, an export retries
// with back-off, one clear line each time, and delivers everything once
// Jaeger comes up on the endpoint.
func TestJaegerEndpointDown(t *testing.T) {
	bin := jaegertest.Binary(t)
	ports := jaegertest.FreePorts(t)
	path := finishedDemo(t)
	state := t.TempDir()
	endpoint := "http://127.0.0.1:" + strconv.Itoa(ports.HTTP)
	type result struct {
		code     int
		out, err string
		took     time.Duration
	}
	res := make(chan result, 1)
	start := time.Now()
	var stderr lockedBuffer
	go func() {
		var out strings.Builder
		code := cli.RunContext(context.Background(), []string{"otel", "--store", path, "--endpoint", endpoint,
			"--service", "vigil-down", "--store-id", "test:down", "--retry-for", "60s"}, strings.NewReader(""), &out, &stderr,
			[]string{"XDG_STATE_HOME=" + state, "HOME=" + state})
		res <- result{code, out.String(), stderr.String(), time.Since(start)}
	}()
	// Jaeger comes up once the export has failed twice.
	for strings.Count(stderr.String(), "retrying in") < 2 {
		select {
		case r := <-res:
			t.Fatalf("the export ended with nothing listening: exit %d %q %q", r.code, r.out, r.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	j := jaegertest.StartOn(t, bin, ports)
	up := time.Since(start)
	var r result
	select {
	case r = <-res:
	case <-time.After(40 * time.Second):
		t.Fatal("the export did not finish after Jaeger came up")
	}
	t.Logf("Jaeger up after %s; export done after %s\nstdout: %sstderr: %s", up.Round(time.Millisecond), r.took.Round(time.Millisecond), r.out, r.err)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.out, r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.err), "\n")
	retries := 0
	for _, l := range lines {
		if strings.Contains(l, "retrying in") {
			retries++
			if !strings.HasPrefix(l, "vigil: otel: "+endpoint+"/v1/traces: ") || !strings.Contains(l, "connection refused") {
				t.Errorf("retry line %q does not say which endpoint and what failed", l)
			}
		}
	}
	if retries < 2 {
		t.Errorf("%d retry lines, want at least 2 (1s, then 2s back-off) before Jaeger came up: %q", retries, r.err)
	}
	if !strings.Contains(r.err, "took the batch after") {
		t.Errorf("no line saying the endpoint took the batch in the end: %q", r.err)
	}
	if !strings.HasPrefix(r.out, "sent ") {
		t.Errorf("stdout %q", r.out)
	}
	if n := len(j.Traces(t, "vigil-down")); n < 4 {
		t.Errorf("Jaeger holds %d traces after the endpoint came up", n)
	}
}

// lockedBuffer is a buffer one goroutine writes while another reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
