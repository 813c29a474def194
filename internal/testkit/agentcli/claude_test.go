package agentcli

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

func claudeUsage(v any) modelserver.Usage {
	return modelserver.Usage{Input: num(at(v, "input_tokens")), Output: num(at(v, "output_tokens")),
		CacheRead: num(at(v, "cache_read_input_tokens")), CacheWrite: num(at(v, "cache_creation_input_tokens"))}
}

func TestClaudeCodeShellCall(t *testing.T) {
	a := Need(t, "claude-code")
	srv := modelserver.Start(t, shellScript(modelserver.Call{Name: "Bash",
		Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}, toolUsage, finalUsage))
	r := a.Run(t, srv.URL, "Write hi to out.txt. [vigil:main]", 90*time.Second)
	id := checkShellRun(t, r, srv)
	if _, ok := srv.ToolResult(id); !ok {
		t.Errorf("claude sent no result for %s", id)
	}
	files := r.Store(a)
	if len(files) != 1 {
		t.Fatalf("transcripts %v, want one", files)
	}
	var sawCall, sawResult, sawFinal bool
	for _, l := range readJSONL(t, files[0]) {
		msg := at(l, "message")
		switch at(l, "type") {
		case "assistant":
			block := at(msg, "content", 0)
			switch {
			case at(block, "type") == "tool_use" && at(block, "id") == id:
				sawCall = true
				if at(block, "name") != "Bash" || at(block, "input", "command") != "echo hi > out.txt" {
					t.Errorf("tool_use %v", block)
				}
				wantUsage(t, "the tool turn", claudeUsage(at(msg, "usage")), toolUsage)
			case at(block, "text") == "Wrote out.txt.":
				sawFinal = true
				wantUsage(t, "the final turn", claudeUsage(at(msg, "usage")), finalUsage)
			}
		case "user":
			block := at(msg, "content", 0)
			if at(block, "type") == "tool_result" && at(block, "tool_use_id") == id {
				sawResult = true
				if at(block, "is_error") != false || at(l, "toolUseResult") == nil {
					t.Errorf("tool result %v", l)
				}
			}
		}
	}
	if !sawCall || !sawResult || !sawFinal {
		logRun(t, r, srv)
		t.Fatalf("%s: tool call %v, its result %v, final text %v", files[0], sawCall, sawResult, sawFinal)
	}
}
