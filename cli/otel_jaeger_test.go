package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/jaegertest"
)

// TestJaegerDemoOtel: `vigil demo --otel URL` exports the demo to a real
// Jaeger as it runs: the history's finished trees are there, their agents
// named by their goals (the demo's text is made up, so it goes whole).
func TestJaegerDemoOtel(t *testing.T) {
	j := jaegertest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code     int
		out, err string
	}
	res := make(chan result, 1)
	go func() {
		code, out, errOut := jaegertest.Vigil(ctx, t.TempDir(), "demo", "--no-tui", "--speed", "50", "--otel", j.HTTPEndpoint())
		res <- result{code, out, errOut}
	}()
	names := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !(names["invoke_agent Migrate config loading from YAML to TOML"] && names["invoke_agent Triage the flaky tests in internal/cache"]) {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s Jaeger holds spans %v, not the demo's history", names)
		}
		time.Sleep(100 * time.Millisecond)
		for _, s := range j.Services(t) {
			if s != "vigil-demo" {
				continue
			}
			for _, tr := range j.Traces(t, "vigil-demo") {
				for _, sp := range tr.Spans {
					names[sp.OperationName] = true
				}
			}
		}
	}
	cancel()
	r := <-res
	if r.code != 0 {
		t.Fatalf("vigil demo --otel: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "vigil: exporting the demo to "+j.HTTPEndpoint()+"/v1/traces as it runs") {
		t.Errorf("stderr %q", r.err)
	}
	if !names["execute_tool read_file"] || !names["chat anthropic/claude-sonnet-4.5"] {
		t.Errorf("span names %v", names)
	}
}
