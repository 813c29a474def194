package agentcli

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

func TestCodexShellCall(t *testing.T) {
	a := Need(t, "codex")
	// The Responses API has no cache write: Codex can only record the rest.
	tool, final := toolUsage, finalUsage
	tool.CacheWrite, final.CacheWrite = 0, 0
	srv := modelserver.Start(t, shellScript(modelserver.Call{Name: "exec_command",
		Args: map[string]any{"cmd": "echo hi > out.txt"}}, tool, final))
	r := a.Run(t, srv.URL, "Write hi to out.txt. [vigil:main]", 90*time.Second)
	id := checkShellRun(t, r, srv)
	if _, ok := srv.ToolResult(id); !ok {
		t.Errorf("codex sent no result for %s", id)
	}
	files := r.Store(a)
	if len(files) != 1 {
		t.Fatalf("rollouts %v, want one", files)
	}
	var sawCall, sawResult bool
	var usages []modelserver.Usage
	for _, l := range readJSONL(t, files[0]) {
		p := at(l, "payload")
		switch str(at(l, "type")) + "/" + str(at(p, "type")) {
		case "response_item/function_call":
			if at(p, "call_id") == id {
				sawCall = at(p, "name") == "exec_command" && at(p, "arguments") == `{"cmd":"echo hi > out.txt"}`
			}
		case "response_item/function_call_output":
			sawResult = sawResult || at(p, "call_id") == id
		case "token_usage_record/":
			u := at(p, "usage")
			usages = append(usages, modelserver.Usage{Input: num(at(u, "input_tokens")), Output: num(at(u, "output_tokens")),
				CacheRead: num(at(u, "cached_input_tokens")), CacheWrite: num(at(u, "cache_write_input_tokens"))})
		}
	}
	if !sawCall || !sawResult || len(usages) != 2 {
		logRun(t, r, srv)
		t.Fatalf("%s: tool call %v, its result %v, usage records %v", files[0], sawCall, sawResult, usages)
	}
	wantUsage(t, "the tool turn", usages[0], tool)
	wantUsage(t, "the final turn", usages[1], final)
}
