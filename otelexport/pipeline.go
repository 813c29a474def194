package otelexport

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// pipeline records an export's spans through the SDK: a TracerProvider
// whose ids are the store's (givenIDs) and whose times are the spans' own
// (WithTimestamp), a batch span processor, and the caller's exporter (the
// OTLP exporter with its retry: NewExporter) behind it. The processor
// tells its caller nothing of a batch's fate, so the exporter is seen
// through acks: a span counts as sent, and goes in the ledger, only once
// the endpoint took it.
type pipeline struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	acks   *acks
}

func newPipeline(exp sdktrace.SpanExporter, res *resource.Resource) *pipeline {
	a := &acks{next: exp, took: map[trace.SpanID]bool{}}
	bsp := sdktrace.NewBatchSpanProcessor(a,
		// One more than send ever records before its ForceFlush: every
		// export is the flush's, under the export's own context, never the
		// processor's timer or a full batch in its goroutine.
		sdktrace.WithMaxExportBatchSize(maxBatchSpans+1),
		sdktrace.WithMaxQueueSize(2*maxBatchSpans),
		sdktrace.WithBatchTimeout(time.Hour),
		sdktrace.WithExportTimeout(0), // the export's context bounds it (RetryFor)
		sdktrace.WithBlocking())       // nothing dropped: a span not taken is sent again
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(bsp),
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(givenIDs{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		// A span is the store's rows whole: a long run's requests are
		// more events than the default limit keeps.
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{AttributeValueLengthLimit: -1, AttributeCountLimit: -1,
			EventCountLimit: -1, LinkCountLimit: -1, AttributePerEventCountLimit: -1, AttributePerLinkCountLimit: -1}))
	return &pipeline{tp: tp, tracer: tp.Tracer(instrumentationScope, trace.WithInstrumentationVersion(instrumentationVersion)), acks: a}
}

// emit records s through the Tracer: it is queued for the next flush.
func (p *pipeline) emit(s spanValue) {
	ctx := context.WithValue(context.Background(), givenKey{}, s.SpanContext)
	if s.Parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, s.Parent)
	}
	_, sp := p.tracer.Start(ctx, s.Name, trace.WithSpanKind(s.SpanKind), trace.WithTimestamp(s.StartTime),
		trace.WithAttributes(s.Attributes...))
	for _, ev := range s.Events {
		sp.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attributes...))
	}
	if s.Status.Code != codes.Unset {
		sp.SetStatus(s.Status.Code, s.Status.Description)
	}
	sp.End(trace.WithTimestamp(s.EndTime))
}

// flush exports what was emitted and returns the ids the endpoint took,
// the refusal of what it did not take (nil if it took all), and partial
// successes (taken, with the endpoint's complaint).
func (p *pipeline) flush(ctx context.Context) (took map[trace.SpanID]bool, refused error, partial []error) {
	ferr := p.tp.ForceFlush(ctx)
	took, refused, partial = p.acks.take()
	if refused == nil {
		refused = ferr
	}
	return took, refused, partial
}

// close stops the provider (the exporter is the caller's: acks leaves it
// running).
func (p *pipeline) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.tp.Shutdown(ctx)
}

// givenKey carries the span context a span is to have (givenIDs).
type givenKey struct{}

// givenIDs is the TracerProvider's IDGenerator: the ids are derived from
// the store (ids.go) and handed to Start in its context, never drawn.
type givenIDs struct{}

func (givenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	sc, _ := ctx.Value(givenKey{}).(trace.SpanContext)
	return sc.TraceID(), sc.SpanID()
}

func (givenIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	sc, _ := ctx.Value(givenKey{}).(trace.SpanContext)
	return sc.SpanID()
}

// acks is the exporter as the batch span processor calls it, keeping each
// batch's answer for send. A refusal is kept here, not returned: the
// processor would hand it to the process-wide error handler, and send says
// it in its own words.
type acks struct {
	next    sdktrace.SpanExporter
	mu      sync.Mutex
	took    map[trace.SpanID]bool
	refused error
	partial []error
}

func (a *acks) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := a.next.ExportSpans(ctx, spans)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil && !isPartialSuccess(err) {
		a.refused = err
		return nil
	}
	if err != nil {
		a.partial = append(a.partial, err)
	}
	for _, s := range spans {
		a.took[s.SpanContext().SpanID()] = true
	}
	return nil
}

// Shutdown leaves the exporter to its owner (Options.Exporter).
func (a *acks) Shutdown(context.Context) error { return nil }

func (a *acks) take() (map[trace.SpanID]bool, error, []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	took, refused, partial := a.took, a.refused, a.partial
	a.took, a.refused, a.partial = map[trace.SpanID]bool{}, nil, nil
	return took, refused, partial
}
