package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// tail says when a request in the tree is asked and when it is decided; a
// run parked on a human is no longer a log gone quiet.
func TestTailTellsRequestsAskedAndDecided(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	tl := startTail(t, "tail", "4", "--store", p)
	tl.waitLine(t, "#5 waits on a human: approval:2 write CHANGELOG.md")
	tl.waitLine(t, "#7 waits on a human: question:1 Keep the replace line for ./internal/tools?")
	newHarness(t).run("approve", "2", "--store", p).wantCode(t, 0)
	tl.waitLine(t, "#5 approval:2 decided: approve")
	if n := strings.Count(tl.out.String(), "waits on a human: approval:2"); n != 1 {
		t.Fatalf("approval:2 told asked %d times:\n%s", n, tl.out.String())
	}
}

// tail --json carries the same: an asked and a decided event.
func TestTailJSONCarriesRequests(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	tl := startTail(t, "tail", "4", "--json", "--store", p)
	waitFor(t, 5*time.Second, "the asked event", func() bool { return strings.Contains(tl.out.String(), `"request":"approval:2"`) })
	newHarness(t).run("approve", "2", "--store", p).wantCode(t, 0)
	waitFor(t, 5*time.Second, "the decided event", func() bool { return strings.Contains(tl.out.String(), `"event":"decided"`) })
	var asked, decided, steps int
	for _, l := range strings.Split(strings.TrimSpace(tl.out.String()), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		switch ev["event"] {
		case "step":
			steps++
			if _, ok := ev["tokens"]; !ok {
				t.Fatalf("a step without tokens: %s", l)
			}
		case "asked":
			asked++
		case "decided":
			decided++
			if ev["request"] != "approval:2" || ev["decision"] != "approve" {
				t.Fatalf("decided event %s", l)
			}
		}
	}
	if steps == 0 || asked < 2 || decided != 1 {
		t.Fatalf("%d steps, %d asked, %d decided:\n%s", steps, asked, decided, tl.out.String())
	}
}
