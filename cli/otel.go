package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/store"
)

type otelOpts struct {
	store, storeID, endpoint, protocol, service string
	headers                                     []string
	follow, content, resend                     bool
	poll, retryFor                              time.Duration
}

func (a *app) otelCmd() *cobra.Command {
	var o otelOpts
	c := &cobra.Command{
		Use:   "otel [RUN…]",
		Short: "Export runs to an OpenTelemetry backend (Jaeger, Tempo, Honeycomb, Langfuse, …)",
		Long: `otel sends every run in the store (or the RUNs named, with every run under
them) to an OTLP endpoint as traces: one trace per root run, an invoke_agent
span per agent (under its parent's), a chat span per provider attempt and an
execute_tool span per tool call, with the OpenTelemetry GenAI attributes
(tokens, models, finish reasons) and vigil's own (outcome, context drift);
approvals, questions and plans are events with the decision and the wait.

Ids are derived from the store and its run and row ids, so an export sent
twice carries the same ids. What the endpoint acknowledged is kept in
$XDG_STATE_HOME/vigil/otel (else ~/.local/state/vigil/otel): an export that
is run again, or restarted, sends only what the endpoint does not have yet
(--resend sends everything again).

--follow keeps exporting as the store grows, a step's spans within moments of
its commit, an agent's span when its run ends. A failing endpoint is retried
with back-off, one line each time. Prompts, model output, tool arguments and
results, goals and request texts are sent only with --content.

Without --endpoint, --protocol or --header the standard variables are read:
OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _PROTOCOL, _HEADERS, _TIMEOUT, and
OTEL_SERVICE_NAME.`,
		Example: `# Jaeger (or any OTLP collector) on this machine
vigil otel --endpoint http://127.0.0.1:4318 --store runs.sqlite3
# follow a live store, over gRPC, with prompts and output
vigil otel --follow --content --protocol grpc --endpoint http://127.0.0.1:4317
# a hosted backend
OTEL_EXPORTER_OTLP_ENDPOINT=https://api.honeycomb.io OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=KEY vigil otel`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return a.otel(cmd.Context(), o, args) },
	}
	f := c.Flags()
	f.StringVar(&o.endpoint, "endpoint", "", "the OTLP endpoint: http(s)://HOST:PORT[/PATH] (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	f.StringVar(&o.protocol, "protocol", "", "the protocol: http/protobuf or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	f.StringArrayVar(&o.headers, "header", nil, "a request header NAME=VALUE; repeat for more (default $OTEL_EXPORTER_OTLP_HEADERS)")
	f.BoolVar(&o.follow, "follow", false, "keep exporting as the store grows, until Ctrl-C (or until the RUNs named have ended)")
	f.BoolVar(&o.content, "content", false, "also send prompts, model output, tool arguments and results, goals and request texts")
	f.StringVar(&o.service, "service", "", "the service.name of the spans (default $OTEL_SERVICE_NAME, else vigil)")
	f.StringVar(&o.store, "store", "", storeHelp)
	f.StringVar(&o.storeID, "store-id", "", "the store's identity the ids are derived from (default: its format and absolute path)")
	f.BoolVar(&o.resend, "resend", false, "send again what the endpoint acknowledged before (the same ids)")
	f.DurationVar(&o.poll, "poll", 0, "with --follow, poll the store at this interval instead of using file events")
	f.DurationVar(&o.retryFor, "retry-for", 2*time.Minute, "without --follow, how long to retry a failing endpoint before giving up (0: for ever)")
	return c
}

// otelEndpoint resolves the endpoint from the flags, else the standard
// OTEL_EXPORTER_OTLP_* variables.
func (a *app) otelEndpoint(o otelOpts) (otelexport.Endpoint, error) {
	ep := otelexport.Endpoint{URL: o.endpoint, Protocol: o.protocol}
	if ep.URL == "" {
		if v := a.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
			ep.URL, ep.Exact = v, true
		} else {
			ep.URL = a.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
	}
	if ep.Protocol == "" {
		ep.Protocol = firstEnv(a, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if ep.Protocol == "" {
		ep.Protocol = otelexport.ProtocolHTTP
	}
	ep.Headers = map[string]string{}
	if len(o.headers) > 0 {
		for _, h := range o.headers {
			k, v, ok := strings.Cut(h, "=")
			if !ok {
				return ep, usagef("bad --header %q: want NAME=VALUE", h)
			}
			k = strings.TrimSpace(k)
			if err := otelexport.CheckHeader(k, v); err != nil {
				return ep, usagef("%s", err.Error())
			}
			ep.Headers[k] = v
		}
	} else {
		for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
			if err := envHeaders(a.getenv(name), name, ep.Headers); err != nil {
				return ep, err
			}
		}
	}
	if v := firstEnv(a, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return ep, usagef("bad OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds", v)
		}
		ep.Timeout = time.Duration(ms) * time.Millisecond
	}
	if _, err := ep.Resolve(); err != nil {
		return ep, &usageError{err}
	}
	return ep, nil
}

func firstEnv(a *app, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(a.getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// envHeaders parses an OTEL_EXPORTER_OTLP_HEADERS value: NAME=VALUE pairs
// separated by commas, values percent-encoded.
func envHeaders(v, name string, into map[string]string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	for _, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		if !ok {
			return usagef("bad %s: %q is not NAME=VALUE", name, pair)
		}
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return usagef("bad %s: the value of %q is not percent-encoded", name, k)
		}
		if err := otelexport.CheckHeader(k, dec); err != nil {
			return usagef("bad %s: %s", name, err.Error())
		}
		into[k] = dec
	}
	return nil
}

func (a *app) otel(ctx context.Context, o otelOpts, runs []string) error {
	if o.retryFor < 0 {
		return usagef("bad --retry-for %s: want a duration, or 0 for ever", o.retryFor)
	}
	if o.poll > 0 && !o.follow {
		return usagef("--poll needs --follow")
	}
	ep, err := a.otelEndpoint(o)
	if err != nil {
		return err
	}
	resolved, _ := ep.Resolve()
	service := o.service
	if service == "" {
		service = strings.TrimSpace(a.getenv("OTEL_SERVICE_NAME"))
	}
	if service == "" {
		service = "vigil"
	}
	path, err := a.resolveStore(o.store)
	if err != nil {
		return err
	}
	src, err := openSource(path, true) // an export only reads
	if err != nil {
		return err
	}
	defer src.Close()
	(&session{a: a, src: src, path: path}).warn(nil)
	storeID := o.storeID
	if storeID == "" {
		storeID = defaultStoreID(src)
	}
	dir, err := otelexport.StateDir(a.getenv)
	if err != nil {
		return err
	}
	ledger, err := otelexport.OpenLedger(dir, storeID, resolved, service)
	if err != nil {
		return err
	}
	defer ledger.Close()
	exp, err := otelexport.NewExporter(ctx, ep)
	if err != nil {
		var be *otelexport.BadEndpointError
		if errors.As(err, &be) {
			return &usageError{err}
		}
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		exp.Shutdown(sctx)
	}()
	shown := otelexport.Display(resolved)
	st, err := otelexport.Run(ctx, otelexport.Options{
		Source: src, StoreID: storeID, Exporter: exp, Endpoint: shown, Service: service, Content: o.content,
		Runs: runs, Follow: o.follow, Poll: o.poll, Ledger: ledger, Resend: o.resend, RetryFor: o.retryFor,
		Log: a.stderr, Out: a.stdout, Now: a.now,
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	if !o.follow || ctx.Err() == nil {
		a.otelSummary(st, shown)
	}
	return nil
}

// otelSummary is the closing line.
func (a *app) otelSummary(st otelexport.Stats, endpoint string) {
	line := fmt.Sprintf("sent %d spans (%d agents, %d model calls, %d tool calls) to %s", st.Spans, st.Agents, st.Calls, st.Tools, endpoint)
	if st.Spans == 0 {
		line = "nothing new to send to " + endpoint
	}
	if st.Skipped > 0 {
		line += "; what it acknowledged before was not sent again (--resend sends it)"
	}
	fmt.Fprintln(a.stdout, line)
}

// defaultStoreID is a store's identity when --store-id does not give one:
// its format and its absolute path, symbolic links resolved.
func defaultStoreID(src store.Source) string {
	p := abs(src.Path())
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return src.Format() + ":" + p
}
