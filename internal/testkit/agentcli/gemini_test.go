package agentcli

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

func TestGeminiCLIShellCall(t *testing.T) {
	a := Need(t, "gemini-cli")
	// Gemini reports no cache write.
	tool, final := toolUsage, finalUsage
	tool.CacheWrite, final.CacheWrite = 0, 0
	srv := modelserver.Start(t, shellScript(modelserver.Call{Name: "run_shell_command",
		Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}, tool, final))
	r := a.Run(t, srv.URL, "Write hi to out.txt. [vigil:main]", 90*time.Second)
	id := checkShellRun(t, r, srv)
	if _, ok := srv.ToolResult(id); !ok {
		t.Errorf("gemini sent no result for %s", id)
	}
	// Its chat file keeps the id prefixed with the tool's name.
	cliID := "run_shell_command__" + id
	files := r.Store(a)
	if len(files) != 1 {
		t.Fatalf("chat files %v, want one", files)
	}
	msgs := geminiMessages(t, files[0])
	var sawCall, sawFinal bool
	for _, m := range msgs {
		switch {
		case at(m, "toolCalls", 0, "id") == cliID:
			c := at(m, "toolCalls", 0)
			sawCall = at(c, "status") == "success" && at(c, "args", "command") == "echo hi > out.txt" &&
				at(c, "result", 0, "functionResponse", "id") == cliID
			wantUsage(t, "the tool turn", geminiUsage(at(m, "tokens")), tool)
		case at(m, "type") == "gemini" && at(m, "content") == "Wrote out.txt.":
			sawFinal = true
			wantUsage(t, "the final turn", geminiUsage(at(m, "tokens")), final)
		}
	}
	if !sawCall || !sawFinal {
		logRun(t, r, srv)
		t.Fatalf("%s: tool call with its result %v, final text %v", files[0], sawCall, sawFinal)
	}
}

// geminiMessages is a chat file's messages, each as its last line (a
// message is re-appended as it completes; $set lines patch the header).
func geminiMessages(t *testing.T, path string) []map[string]any {
	var order []string
	last := map[string]map[string]any{}
	for _, l := range readJSONL(t, path) {
		id := str(at(l, "id"))
		if id == "" || at(l, "type") == nil {
			continue
		}
		if _, ok := last[id]; !ok {
			order = append(order, id)
		}
		last[id] = l
	}
	var out []map[string]any
	for _, id := range order {
		out = append(out, last[id])
	}
	return out
}

func geminiUsage(v any) modelserver.Usage {
	return modelserver.Usage{Input: num(at(v, "input")), Output: num(at(v, "output")), CacheRead: num(at(v, "cached"))}
}
