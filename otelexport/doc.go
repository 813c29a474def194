// Package otelexport turns a run store into OpenTelemetry traces and sends
// them to an OTLP endpoint: `vigil otel`. It reads a store.Source only —
// the domain types, Changes and the watcher, never an adapter — so every
// format exports alike.
//
// # The span model
//
// One trace per root run. A run is an invoke_agent span under its parent
// run's; a provider attempt a chat span and a tool call of a model turn
// an execute_tool span, both under their run's. Approvals, questions and
// plans are events on the asking run's span, with the decision and how
// long the run waited. The attribute keys (the GenAI semantic conventions'
// and vigil's own) are in semconv.go; docs/cli.md lists them for users.
//
// # Spans as values
//
// Spans are not recorded through a Tracer: they are built as values
// (tracetest.SpanStub, turned into a ReadOnlySpan by Snapshot) and handed
// to the SDK's OTLP exporter directly. A Tracer takes its times from the
// clock and its ids from an IDGenerator as the span starts; a store's run
// is over (or its step committed) before vigil sees it, so every time is
// the store's, every id is derived (ids.go) and a span is complete —
// events included — when it is made. And ExportSpans returns the
// endpoint's answer, which a batch span processor would swallow: a batch
// counts as sent only once the endpoint acknowledged it.
//
// # When a span leaves
//
// A chat span once its step has committed; an execute_tool span once its
// turn's row has; an invoke_agent span once the run has ended (so a live
// agent shows as its finished children and steps). Following, each
// refresh of the store (a file event, or a poll) sends what became ready;
// a failing endpoint is retried with back-off, and what it acknowledged is
// recorded in the Ledger, so a restarted export never sends a span twice.
package otelexport
