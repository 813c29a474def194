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
// # Spans through the SDK
//
// Spans are built as values from the store's rows (spanValue) and recorded
// through the SDK's Tracer with the store's times (WithTimestamp) and ids
// (an IDGenerator that hands out the derived ids, ids.go): a store's run is
// over, or its step committed, before vigil sees it, so nothing comes from
// the clock or a random source. A batch span processor takes them to the
// OTLP exporter, whose own retry handles a throttled or unavailable
// endpoint. The processor reports no batch's fate, so the exporter is
// wrapped to keep each batch's answer (pipeline.go): a batch counts as sent
// only once the endpoint acknowledged it, and what the exporter gives back
// untaken is sent again.
//
// # When a span leaves
//
// A chat span once its step has committed; an execute_tool span once its
// turn's row has; an invoke_agent span once the run has ended (so a live
// agent shows as its finished children and steps). Following, each
// refresh of the store (a file event, or a poll) sends what became ready;
// a failing endpoint is retried with back-off, and what it acknowledged is
// recorded in the Ledger, so a restarted export sends only what was not
// acknowledged. Delivery is at least once: a batch whose reply was lost is
// sent again, under the same ids.
package otelexport
