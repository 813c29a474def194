// Package jaegertest runs a real Jaeger (v2, all-in-one, in-memory
// storage) for tests and reads back what it stored through its HTTP query
// API. Jaeger listens on loopback only, on ports picked free for the test,
// from a config file written in the test's temporary directory.
//
// The binary is named by $VIGIL_JAEGER (.ci/run builds it once from the
// Go module proxy and caches it). Without it a test skips, saying how to
// get one — unless $VIGIL_REQUIRE_JAEGER=1 (CI), where it fails.
package jaegertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// Ports are the loopback ports a Jaeger listens on.
type Ports struct{ GRPC, HTTP, Query, QueryGRPC int }

// Jaeger is a running Jaeger.
type Jaeger struct {
	Ports
	cmd *exec.Cmd
	log string
}

// Binary is the Jaeger binary to run, or "" (the test has been skipped or
// failed).
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("VIGIL_JAEGER")
	why := ""
	switch fi, err := os.Stat(bin); {
	case bin == "":
		why = "$VIGIL_JAEGER is not set"
	case err != nil:
		why = fmt.Sprintf("$VIGIL_JAEGER=%s: %v", bin, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		why = fmt.Sprintf("$VIGIL_JAEGER=%s is not an executable file", bin)
	}
	if why == "" {
		return bin
	}
	msg := why + ": the Jaeger end-to-end test needs a Jaeger v2 binary (.ci/run builds one: " +
		"github.com/jaegertracing/jaeger/cmd/jaeger v1.76.0, in a module of its own)"
	if os.Getenv("VIGIL_REQUIRE_JAEGER") == "1" {
		t.Fatal(msg)
	}
	testkit.Need(t, "Jaeger", msg)
	return ""
}

// FreePorts picks loopback ports nothing listens on.
func FreePorts(t testing.TB) Ports {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range 4 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return Ports{GRPC: ports[0], HTTP: ports[1], Query: ports[2], QueryGRPC: ports[3]}
}

// Start starts Jaeger on free ports and waits until it answers.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := Binary(t)
	return StartOn(t, bin, FreePorts(t))
}

const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: []
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    enable_tracing: false
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// StartOn starts the Jaeger binary bin on p and waits until it answers;
// the test's cleanup stops it.
func StartOn(t testing.TB, bin string, p Ports) *Jaeger {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, p.Query, p.QueryGRPC, p.GRPC, p.HTTP)), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "jaeger.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	// No OTEL_* from the test's environment: Jaeger is an SDK user too.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	j := &Jaeger{Ports: p, cmd: cmd, log: logPath}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("jaeger exited before it answered (%v):\n%s", err, j.Log())
		default:
		}
		if j.ready() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer within 30s:\n%s", j.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (j *Jaeger) ready() bool {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/services", j.Query))
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	for _, port := range []int{j.HTTP, j.GRPC} {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// Log is what Jaeger has logged (its last 8 KiB).
func (j *Jaeger) Log() string {
	b, _ := os.ReadFile(j.log)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

// HTTPEndpoint is the OTLP/HTTP base URL.
func (j *Jaeger) HTTPEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", j.HTTP) }

// GRPCEndpoint is the OTLP/gRPC URL.
func (j *Jaeger) GRPCEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", j.GRPC) }

// Span is a span as Jaeger's query API returns it.
type Span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"` // µs
	Duration  int64 `json:"duration"`  // µs
	Tags      []Tag `json:"tags"`
	Logs      []struct {
		Timestamp int64 `json:"timestamp"`
		Fields    []Tag `json:"fields"`
	} `json:"logs"`
	ProcessID string   `json:"processID"`
	Warnings  []string `json:"warnings"`
}

// Tag is a span attribute.
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Parent is the span's CHILD_OF parent, or "".
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of the attribute key, and whether the span has it.
func (s Span) Tag(key string) (any, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return nil, false
}

// Trace is one trace as the query API returns it.
type Trace struct {
	TraceID   string `json:"traceID"`
	Spans     []Span `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
		Tags        []Tag  `json:"tags"`
	} `json:"processes"`
	Warnings []string `json:"warnings"`
}

type response[T any] struct {
	Data   T `json:"data"`
	Errors []struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

func (j *Jaeger) get(ctx context.Context, path string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", j.Query, path), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // token counts compare as the integers they are
	return resp.StatusCode, dec.Decode(v)
}

// Services lists the services Jaeger holds spans of.
func (j *Jaeger) Services(t testing.TB) []string {
	t.Helper()
	var r response[[]string]
	if _, err := j.get(context.Background(), "/api/services", &r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}

// Traces searches a service's traces (every trace of the last year).
func (j *Jaeger) Traces(t testing.TB, service string) []Trace {
	t.Helper()
	var r response[[]Trace]
	// Every trace from ten years back to a year ahead: stores' clocks are
	// their own, and fixtures are stamped in the past.
	now := time.Now()
	q := fmt.Sprintf("/api/traces?service=%s&limit=1000&start=%d&end=%d", url.QueryEscape(service),
		now.AddDate(-10, 0, 0).UnixMicro(), now.AddDate(1, 0, 0).UnixMicro())
	if _, err := j.get(context.Background(), q, &r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}

// Trace is one trace by id as the query API shows it (spans stored twice
// with the same content shown once, as Jaeger's UI shows them), or raw:
// every span as stored. ok is false when Jaeger has no such trace.
func (j *Jaeger) Trace(t testing.TB, id string, raw bool) (Trace, bool) {
	t.Helper()
	tr, ok, err := j.TraceErr(context.Background(), id, raw)
	if err != nil {
		t.Fatal(err)
	}
	return tr, ok
}

// TraceErr is Trace without a test.
func (j *Jaeger) TraceErr(ctx context.Context, id string, raw bool) (Trace, bool, error) {
	path := "/api/traces/" + id
	if raw {
		path += "?raw=true"
	}
	var r response[[]Trace]
	code, err := j.get(ctx, path, &r)
	if code == http.StatusNotFound {
		return Trace{}, false, nil
	}
	if err != nil {
		return Trace{}, false, err
	}
	if len(r.Data) == 0 {
		return Trace{}, false, nil
	}
	return r.Data[0], true, nil
}
