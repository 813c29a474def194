package cli

import (
	"encoding/json"
	"fmt"

	"github.com/vigil-run/vigil/store/gate"
)

// geminiHook is Gemini CLI's BeforeTool hook (docs/gate.md): the request
// as JSON on stdin, the answer as {"decision","reason"} on stdout. Read
// from Gemini CLI's HookRunner.executeCommandHook and
// evaluateBeforeToolHook (packages/core/src/hooks, src/scheduler).
var geminiHook = hookDialect{
	name:  "gemini",
	agent: gate.AgentGeminiCLI,
	parse: func(body []byte) (gate.Request, error) {
		var in struct {
			SessionID string          `json:"session_id"`
			Cwd       string          `json:"cwd"`
			Event     string          `json:"hook_event_name"`
			Tool      string          `json:"tool_name"`
			Input     json.RawMessage `json:"tool_input"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return gate.Request{}, fmt.Errorf("the hook input is not Gemini CLI's JSON: %v", err)
		}
		if in.Event != "BeforeTool" {
			return gate.Request{}, fmt.Errorf("hook event %q: vigil gate answers Gemini CLI's BeforeTool", in.Event)
		}
		if in.Tool == "" {
			return gate.Request{}, fmt.Errorf("the %s input names no tool", in.Event)
		}
		input := string(in.Input)
		if input == "" || input == "null" {
			input = "{}"
		}
		// No tool-call id in the request: the call is known by its
		// session, tool and arguments. The hook is Gemini CLI's own child
		// (through bash), so its parent is the agent.
		pid, start := gate.ParentAgent()
		return gate.Request{Agent: gate.AgentGeminiCLI, Event: in.Event, SessionID: in.SessionID, Cwd: in.Cwd,
			Tool: in.Tool, Input: input, AgentPID: pid, AgentStart: start}, nil
	},
	answer: func(event string, a hookAnswer) []byte {
		// "ask" would force Gemini CLI's own confirmation, which a
		// headless run (gemini -p) never answers: the run would wait
		// forever. The hook cannot tell a headless run from the TUI, so
		// no decision is a deny.
		d := "deny"
		if a.verdict == answerAllow {
			d = "allow"
		}
		b, _ := json.Marshal(map[string]string{"decision": d, "reason": a.reason})
		return append(b, '\n')
	},
	// Exit 2 with stderr and no stdout: Gemini CLI reads the stderr text
	// as a deny with that text as its reason (convertPlainTextToHookOutput);
	// exit 1 would be a warning that lets the call run.
	failCode: 2,
}
