package cli

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestOtelUsage: a bad endpoint, protocol, header or variable is one line
// and exit 2, before the store is read or anything is sent.
func TestOtelUsage(t *testing.T) {
	path := fixtureStore(t)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no endpoint", nil, nil, "no endpoint: give --endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"scheme", nil, []string{"--endpoint", "ftp://127.0.0.1:4318"}, `bad endpoint "ftp://127.0.0.1:4318": the URL must start with http:// or https://`},
		{"no host", nil, []string{"--endpoint", "http://:4318"}, "no host"},
		{"port", nil, []string{"--endpoint", "http://127.0.0.1:99999"}, `port "99999" is not a port number`},
		{"not a url", nil, []string{"--endpoint", "http://[::1"}, "bad endpoint"},
		{"query", nil, []string{"--endpoint", "http://127.0.0.1:4318/?x=1"}, "a query or fragment"},
		{"grpc path", nil, []string{"--endpoint", "http://127.0.0.1:4317/v1/traces", "--protocol", "grpc"}, "a gRPC endpoint has no path"},
		{"protocol", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--protocol", "thrift"}, `unknown protocol "thrift"`},
		{"json", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--protocol", "http/json"}, `protocol "http/json" is not supported`},
		{"header form", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--header", "Authorization"}, `bad --header "Authorization": want NAME=VALUE`},
		{"header name", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--header", "x key=1"}, `bad header name "x key"`},
		{"header value", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--header", "x-key=a\r\nInjected: 1"}, `bad header "x-key": its value holds a control character`},
		{"env endpoint", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318"}, nil, `bad endpoint "localhost:4318"`},
		{"env protocol", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL=udp"}, nil, `unknown protocol "udp"`},
		{"env headers", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_HEADERS=api-key"}, nil, `bad OTEL_EXPORTER_OTLP_HEADERS: "api-key" is not NAME=VALUE`},
		{"env header escape", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_HEADERS=k=%zz"}, nil, "is not percent-encoded"},
		{"env timeout", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TIMEOUT=soon"}, nil, "want milliseconds"},
		{"poll alone", nil, []string{"--endpoint", "http://127.0.0.1:4318", "--poll", "1s"}, "--poll needs --follow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.env = append(h.env, "XDG_STATE_HOME="+t.TempDir())
			h.env = append(h.env, c.env...)
			r := h.run(append([]string{"otel", "--store", path}, c.args...)...)
			r.wantCode(t, ExitUsage)
			r.oneLine(t, c.want)
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}

// TestOtelErrors: a run that is not in the store, and an endpoint that
// stays down past --retry-for, are one line and exit 1; the store is
// never written.
func TestOtelErrors(t *testing.T) {
	path := fixtureStore(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.env = append(h.env, "XDG_STATE_HOME="+t.TempDir())
	r := h.run("otel", "--store", path, "--endpoint", "http://127.0.0.1:4318", "99")
	r.wantCode(t, ExitError)
	r.oneLine(t, "99")

	// A port nothing listens on, and no patience.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r = h.run("otel", "--store", path, "--endpoint", "http://"+addr, "--retry-for", "1ms")
	r.wantCode(t, ExitError)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "vigil: http://"+addr+"/v1/traces: gave up after 1 attempts") || !strings.Contains(last, "connection refused") {
		t.Errorf("last line %q", last)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("the export wrote to the store")
	}
}

// TestDemoOtelUsage: a bad --otel endpoint is one line and exit 2, before
// the demo writes anything.
func TestDemoOtelUsage(t *testing.T) {
	h := newHarness(t)
	keep := t.TempDir() + "/demo.sqlite3"
	r := h.run("demo", "--no-tui", "--store", keep, "--otel", "localhost:4318")
	r.wantCode(t, ExitUsage)
	r.oneLine(t, `--otel: bad endpoint "localhost:4318"`)
	if _, err := os.Stat(keep); err == nil {
		t.Error("the demo store was written")
	}
}
