package otelexport_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/vigil-run/vigil/otelexport"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// With --content, text from the store reaches the backend with every
// control a terminal acts on escaped as \uXXXX, as `vigil runs --json`
// writes it: an OSC 52 clipboard write in a goal, an ESC[2J and a BEL in a
// step's decision, a C1 CSI in a tool's result and arguments arrive as
// readable text. Line breaks and tabs stay the text's own.
func TestContentEscapesTerminalControls(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const osc52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
	run, err := w.StartRun(ctx, "Ship it"+osc52+"\nthen rest", "/work")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RecordProviderCall(ctx, run, store.ProviderCall{Step: 1, Provider: "anthropic", Model: "m",
		PromptTokens: ptr(int64(10)), CompletionTokens: ptr(int64(5)), TotalTokens: ptr(int64(15)), LatencyMS: 5, FinishReason: "tool_use"}); err != nil {
		t.Fatal(err)
	}
	args := `{"cmd":"echo \u001b[31m","raw":"` + "\u009b" + `2J"}`
	if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "clear\x1b[2J\a\tnow", Result: "out\u009b6n\r\ndone",
		Prompt: "P\x1b]0;title\x07", ToolCall: "exec:" + args, Tokens: 15,
		Turn: &harness.Turn{Text: ptr("T\x1b[2J"), Calls: []harness.ToolCall{{Name: "exec", Arguments: json.RawMessage(args)}}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, run, store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}

	spans := export(t, path, otelexport.Options{Content: true})
	seen := map[string]string{}
	check := func(where string, a attribute.KeyValue) {
		if a.Value.Type() != attribute.STRING {
			return
		}
		v := a.Value.AsString()
		seen[string(a.Key)] = v
		for _, r := range v {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Errorf("%s %s holds %U raw: %q", where, a.Key, r, v)
				break
			}
		}
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			check(s.Name, a)
		}
		for _, ev := range s.Events {
			for _, a := range ev.Attributes {
				check(s.Name+" "+ev.Name, a)
			}
		}
	}
	for key, want := range map[string]string{
		"vigil.run.goal":           `Ship it\u001b]52;c;cm0gLXJmIH4K\u0007` + "\nthen rest",
		"gen_ai.agent.description": `Ship it\u001b]52;c;cm0gLXJmIH4K\u0007` + "\nthen rest",
		"vigil.step.decision":      `clear\u001b[2J\u0007` + "\tnow",
		"gen_ai.tool.call.result":  `out\u009b6n\u000d` + "\ndone",
	} {
		if seen[key] != want {
			t.Errorf("%s = %q, want %q", key, seen[key], want)
		}
	}
	// The message lists stay JSON that decodes to the store's text.
	var msgs []struct {
		Parts []struct {
			Content   string          `json:"content"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(seen["gen_ai.output.messages"]), &msgs); err != nil || len(msgs) != 1 || len(msgs[0].Parts) != 2 {
		t.Fatalf("output messages %q: %v", seen["gen_ai.output.messages"], err)
	}
	if msgs[0].Parts[0].Content != "T\x1b[2J" {
		t.Errorf("the turn's text decodes to %q", msgs[0].Parts[0].Content)
	}
	var a map[string]string
	if err := json.Unmarshal(msgs[0].Parts[1].Arguments, &a); err != nil || a["raw"] != "\u009b2J" || a["cmd"] != "echo \x1b[31m" {
		t.Errorf("the call's arguments decode to %v (%v)", a, err)
	}
	if strings.Contains(seen["gen_ai.tool.call.arguments"], "\u009b") {
		t.Errorf("arguments hold a raw CSI")
	}
}
