package cli

import (
	"encoding/json"
	"fmt"

	"github.com/vigil-run/vigil/store/gate"
)

// claudeHook is Claude Code's hook protocol (docs/gate.md): PreToolUse
// and PermissionRequest requests on stdin, the answer as JSON on stdout.
var claudeHook = hookDialect{
	name:  "claude",
	agent: gate.AgentClaudeCode,
	parse: func(body []byte) (gate.Request, error) {
		var in struct {
			SessionID string          `json:"session_id"`
			AgentID   string          `json:"agent_id"`
			Cwd       string          `json:"cwd"`
			Event     string          `json:"hook_event_name"`
			Tool      string          `json:"tool_name"`
			Input     json.RawMessage `json:"tool_input"`
			ToolUseID string          `json:"tool_use_id"`
			// What Claude Code's own prompt would offer to allow from now
			// on (PermissionRequest only).
			Suggestions json.RawMessage `json:"permission_suggestions"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return gate.Request{}, fmt.Errorf("the hook input is not Claude Code's JSON: %v", err)
		}
		if in.Event != "PreToolUse" && in.Event != "PermissionRequest" {
			return gate.Request{}, fmt.Errorf("hook event %q: vigil gate answers PreToolUse and PermissionRequest", in.Event)
		}
		if in.Tool == "" {
			return gate.Request{}, fmt.Errorf("the %s input names no tool", in.Event)
		}
		input := string(in.Input)
		if input == "" {
			input = "{}"
		}
		r := gate.Request{Agent: gate.AgentClaudeCode, Event: in.Event, SessionID: in.SessionID, AgentID: in.AgentID,
			Cwd: in.Cwd, Tool: in.Tool, Input: input, ToolUseID: in.ToolUseID}
		// Only a PermissionRequest answer can carry them back.
		if in.Event == "PermissionRequest" && len(in.Suggestions) > 0 && string(in.Suggestions) != "null" && string(in.Suggestions) != "[]" {
			r.Suggestions = string(in.Suggestions)
		}
		return r, nil
	},
	answer: func(event string, a hookAnswer) []byte {
		var out any
		switch event {
		case "PreToolUse":
			out = map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event,
				"permissionDecision": string(a.verdict), "permissionDecisionReason": a.reason}}
		case "PermissionRequest":
			return permissionRequestAnswer(a) // no decision: Claude Code asks in its own prompt
		default:
			return nil
		}
		b, _ := json.Marshal(out)
		return append(b, '\n')
	},
	// A request that cannot be parsed or recorded: exit 2 blocks the call
	// in both events and shows Claude Code the one line on stderr.
	failCode: 2,
}

// permissionRequestAnswer is the answer to a PermissionRequest hook, the
// same for Claude Code and Codex: nothing when there is no decision (the
// CLI asks in its own way), else the decision with its reason, and with
// an approval "always", the suggestions the request offered, applied as
// offered (Claude Code's "don't ask again").
func permissionRequestAnswer(a hookAnswer) []byte {
	if a.verdict == answerAsk {
		return nil
	}
	d := map[string]any{"behavior": string(a.verdict)}
	if a.reason != "" {
		d["message"] = a.reason
	}
	if a.verdict == answerAllow && a.always != nil {
		d["updatedPermissions"] = a.always
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PermissionRequest", "decision": d}})
	return append(b, '\n')
}
