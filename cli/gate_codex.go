package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/store/gate"
)

// codexAgent is the agent name Codex's requests carry in the gate store.
const codexAgent = "codex"

// codexHook is Codex's hook protocol (codex-rs/hooks, docs/gate.md): the
// request as JSON on stdin, the answer as JSON on stdout.
//
// PreToolUse can only deny: output_parser.rs
// unsupported_pre_tool_use_hook_specific_output takes
// permissionDecision "allow" and "ask" as invalid output, and an invalid
// or failed hook lets the call run. So an approval writes nothing (the
// call goes ahead, as with no hook), and every other answer is a deny
// with a reason, which must not be empty (a deny without one is invalid
// too, and would let the call run).
//
// PermissionRequest (the approval path, which `codex exec` never takes:
// it runs with approval_policy never) answers allow or deny with a
// message, or nothing to leave the question to Codex's own approval flow
// (permission_request.rs parse_completed).
var codexHook = hookDialect{
	name:  "codex",
	agent: codexAgent,
	parse: func(body []byte) (gate.Request, error) {
		var in struct {
			SessionID string          `json:"session_id"`
			AgentID   string          `json:"agent_id"`
			Cwd       string          `json:"cwd"`
			Event     string          `json:"hook_event_name"`
			Tool      string          `json:"tool_name"`
			Input     json.RawMessage `json:"tool_input"`
			ToolUseID string          `json:"tool_use_id"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return gate.Request{}, fmt.Errorf("the hook input is not Codex's JSON: %v", err)
		}
		if in.Event != "PreToolUse" && in.Event != "PermissionRequest" {
			return gate.Request{}, fmt.Errorf("hook event %q: vigil gate answers PreToolUse and PermissionRequest", in.Event)
		}
		if in.Tool == "" {
			return gate.Request{}, fmt.Errorf("the %s input names no tool", in.Event)
		}
		input := string(in.Input)
		if input == "" || input == "null" {
			input = "{}"
		}
		if in.AgentID == in.SessionID {
			in.AgentID = "" // a sub-agent's own thread is its session: no run under itself
		}
		// tool_use_id is the call_id of the function_call in the session's
		// rollout; PermissionRequest carries none.
		return gate.Request{Agent: codexAgent, Event: in.Event, SessionID: in.SessionID, AgentID: in.AgentID,
			Cwd: in.Cwd, Tool: in.Tool, Input: input, ToolUseID: in.ToolUseID}, nil
	},
	answer: func(event string, a hookAnswer) []byte {
		var out any
		switch event {
		case "PreToolUse":
			if a.verdict == answerAllow {
				return nil // no decision: the call runs
			}
			reason := strings.TrimSpace(a.reason)
			if reason == "" {
				reason = "denied in vigil"
			}
			out = map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event,
				"permissionDecision": string(answerDeny), "permissionDecisionReason": reason}}
		case "PermissionRequest":
			return permissionRequestAnswer(a) // no decision: Codex's own approval flow asks
		default:
			return nil
		}
		b, _ := json.Marshal(out)
		return append(b, '\n')
	},
	// A request that cannot be parsed or recorded: exit 2 with the reason
	// on stderr blocks the call in both events (any other status lets it
	// run).
	failCode: 2,
}
