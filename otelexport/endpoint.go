package otelexport

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Protocols an endpoint can speak (the names OTEL_EXPORTER_OTLP_PROTOCOL uses).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Endpoint is where spans go.
type Endpoint struct {
	// URL is the traces URL as given: for http/protobuf, a base URL gets
	// /v1/traces appended unless Exact (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// is used as it is).
	URL      string
	Exact    bool
	Protocol string
	Headers  map[string]string
	Timeout  time.Duration // per export call (default 10s)
}

// BadEndpointError is an endpoint, protocol or header vigil cannot use:
// the caller's mistake, said in one line.
type BadEndpointError struct{ Msg string }

func (e *BadEndpointError) Error() string { return e.Msg }

func bad(format string, args ...any) error {
	return &BadEndpointError{Msg: fmt.Sprintf(format, args...)}
}

// Resolve checks the endpoint and returns the URL spans are posted to.
func (ep Endpoint) Resolve() (string, error) {
	switch ep.Protocol {
	case ProtocolHTTP, ProtocolGRPC:
	case "http/json":
		return "", bad("protocol %q is not supported: use %s or %s", ep.Protocol, ProtocolHTTP, ProtocolGRPC)
	default:
		return "", bad("unknown protocol %q: use %s or %s", ep.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	raw := strings.TrimSpace(ep.URL)
	if raw == "" {
		return "", bad("no endpoint: give --endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", bad("bad endpoint %q: %s", raw, urlProblem(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", bad("bad endpoint %q: the URL must start with http:// or https://", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", bad("bad endpoint %q: no host", raw)
	}
	if p := u.Port(); p != "" {
		n := 0
		for _, c := range p {
			n = n*10 + int(c-'0')
			if c < '0' || c > '9' || n > 65535 {
				return "", bad("bad endpoint %q: port %q is not a port number", raw, p)
			}
		}
		if n == 0 {
			return "", bad("bad endpoint %q: port 0", raw)
		}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", bad("bad endpoint %q: a query or fragment has no place in an OTLP endpoint", raw)
	}
	if ep.Protocol == ProtocolGRPC {
		if u.Path != "" && u.Path != "/" {
			return "", bad("bad endpoint %q: a gRPC endpoint has no path", raw)
		}
		u.Path = ""
		return u.String(), nil
	}
	if !ep.Exact && !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

func urlProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// CheckHeader says whether k=v can go in a request header.
func CheckHeader(k, v string) error {
	if k == "" {
		return bad("bad header %q: no name (want NAME=VALUE)", k+"="+v)
	}
	for _, c := range k {
		if !isTokenChar(c) {
			return bad("bad header name %q: only letters, digits and !#$%%&'*+-.^_`|~ may name a header", k)
		}
	}
	for _, c := range v {
		if c == '\r' || c == '\n' || c == 0 || (c < 0x20 && c != '\t') || c == 0x7f {
			return bad("bad header %q: its value holds a control character", k)
		}
	}
	return nil
}

func isTokenChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)
}

// Display is the endpoint as messages name it: scheme, host and path, no
// credentials.
func Display(resolved string) string {
	u, err := url.Parse(resolved)
	if err != nil {
		return "the endpoint"
	}
	u.User = nil
	return u.String()
}

// NewExporter makes the OTLP exporter for ep, with the SDK's own retry
// policy for what it holds to be passing (a throttled or unavailable
// endpoint). Run bounds it by the export's context and sends again what it
// gives back untaken.
func NewExporter(ctx context.Context, ep Endpoint) (sdktrace.SpanExporter, error) {
	resolved, err := ep.Resolve()
	if err != nil {
		return nil, err
	}
	for k, v := range ep.Headers {
		if err := CheckHeader(k, v); err != nil {
			return nil, err
		}
	}
	timeout := ep.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	headers := ep.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	switch ep.Protocol {
	case ProtocolGRPC:
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(resolved), otlptracegrpc.WithHeaders(headers),
			otlptracegrpc.WithTimeout(timeout))
	default:
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(resolved), otlptracehttp.WithHeaders(headers),
			otlptracehttp.WithTimeout(timeout))
	}
}
