package otelexport_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/codex"
)

// A step in flight reaches a follower as a pending placeholder and then as
// its committed row: the tool call is one span, the committed step's.
func TestPendingRowIsNotASpan(t *testing.T) {
	const id = "01a2430c-0000-7000-8000-00000000186a"
	file := filepath.Join(t.TempDir(), "rollout-2026-12-04T18-35-49-"+id+".jsonl")
	write := func(s string) {
		t.Helper()
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"timestamp":"2026-12-04T18:35:49.104Z","type":"session_meta","payload":{"id":"` + id + `","timestamp":"2026-12-04T18:35:49.076Z","cwd":"/w","source":"exec","model_provider":"mock"}}
{"timestamp":"2026-12-04T18:35:49.200Z","type":"event_msg","payload":{"type":"task_started"}}
{"timestamp":"2026-12-04T18:35:49.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Watch me write a file."}]}}
`)
	src, err := store.Open(file, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	mem := tracetest.NewInMemoryExporter()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := otelexport.Run(ctx, otelexport.Options{Source: src, Exporter: mem, Endpoint: "memory", StoreID: "test:pending",
			Runs: []string{id}, Follow: true, Poll: 20 * time.Millisecond})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the follower is past its first read
	write(`{"timestamp":"2026-12-04T18:35:50.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 6\"}","call_id":"call_1"}}
`)
	time.Sleep(300 * time.Millisecond) // it has read the placeholder
	write(`{"timestamp":"2026-12-04T18:35:56.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"done"}}
{"timestamp":"2026-12-04T18:35:56.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386},"last_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386}}}}
{"timestamp":"2026-12-04T18:35:57.000Z","type":"event_msg","payload":{"type":"task_complete","duration_ms":7896}}
`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, s := range mem.GetSpans() {
		if s.Name == "execute_tool exec_command" {
			tools = append(tools, s.SpanContext.SpanID().String())
		}
	}
	if len(tools) != 1 {
		t.Fatalf("tool spans %v: want the one call once (spans %d)", tools, len(mem.GetSpans()))
	}
}
