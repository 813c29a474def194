package ioharness

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
)

// A step's tool calls are recorded twice: as JSON in step_turns.calls
// (0.64 on: [{"name": …, "arguments": {…}}], no call ids) and as the
// steps.tool_call summary, each call "name:{json}", joined with " | ".
// The JSON is read when it is there; older stores are read from the
// summary.

// turnCalls reads step_turns.calls; nil when it holds no calls or is not
// the JSON io-harness writes.
func turnCalls(raw string) []store.ToolCall {
	var calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(raw), &calls) != nil {
		return nil
	}
	var out []store.ToolCall
	for _, c := range calls {
		if c.Name == "" {
			continue
		}
		args := c.Arguments
		var compact bytes.Buffer
		if json.Compact(&compact, args) == nil {
			args = compact.Bytes()
		}
		if string(args) == "null" {
			args = nil
		}
		out = append(out, store.ToolCall{Name: c.Name, Arguments: capText(string(args))})
	}
	return out
}

// summaryCalls reads the steps.tool_call summary. A " | " only separates
// two calls where a tool name and its colon follow it (an argument may
// hold " | " itself).
func summaryCalls(summary string) []store.ToolCall {
	if strings.TrimSpace(summary) == "" {
		return nil
	}
	var parts []string
	rest := summary
	for {
		i := nextCall(rest)
		if i < 0 {
			parts = append(parts, rest)
			break
		}
		parts = append(parts, rest[:i])
		rest = rest[i+len(" | "):]
	}
	var out []store.ToolCall
	for _, p := range parts {
		name, args, ok := strings.Cut(p, ":")
		if !ok || !isToolName(name) {
			continue
		}
		out = append(out, store.ToolCall{Name: name, Arguments: capText(args)})
	}
	return out
}

// nextCall is where the next " | name:" separator starts in s, or -1: a
// " | " counts when the call before it is whole (name:JSON) and a tool
// name and its colon follow it.
func nextCall(s string) int {
	off := 0
	for {
		i := strings.Index(s[off:], " | ")
		if i < 0 {
			return -1
		}
		at := off + i
		after := s[at+len(" | "):]
		_, args, _ := strings.Cut(s[:at], ":")
		if name, _, ok := strings.Cut(after, ":"); ok && isToolName(name) && json.Valid([]byte(args)) {
			return at
		}
		off = at + 1
	}
}

// isToolName reports a plausible tool name: letters, digits, _ - . only.
func isToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// capText cuts s to at most MaxDetailBytes, on a rune boundary.
func capText(s string) string {
	if len(s) <= store.MaxDetailBytes {
		return s
	}
	n := store.MaxDetailBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
