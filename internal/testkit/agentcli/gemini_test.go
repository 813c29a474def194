package agentcli

import (
	"path/filepath"
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

func TestGeminiCLISubAgent(t *testing.T) {
	a := Need(t, "gemini-cli")
	sub := subUsage
	sub.CacheWrite = 0
	// A Gemini sub-agent ends only by calling complete_task.
	end := modelserver.Turn{Calls: []modelserver.Call{{Name: "complete_task", Args: map[string]any{"result": map[string]any{"response": "Wrote sub.txt."}}}}}
	srv := modelserver.Start(t, subScript(
		modelserver.Call{Name: "invoke_agent", Args: map[string]any{"agent_name": "generalist", "prompt": subPrompt}},
		[]modelserver.Turn{{Text: "All done."}},
		modelserver.Call{Name: "run_shell_command", Args: map[string]any{"command": "echo sub > sub.txt", "description": "write sub.txt"}}, end, sub))
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	spawn, shell := checkSubRun(t, r, srv)
	files := r.Store(a)
	mains, children := filterFiles(files, "/chats/session-"), without(files, "/chats/session-")
	if len(mains) != 1 || len(children) != 1 {
		t.Fatalf("chat files %v: want the session's and one sub-agent's", files)
	}
	header := readJSONL(t, mains[0])[0]
	if sid := str(at(header, "sessionId")); filepath.Base(filepath.Dir(children[0])) != sid {
		t.Errorf("the sub-agent's file %s is not under the session %s", children[0], sid)
	}
	if kind := at(readJSONL(t, children[0])[0], "kind"); kind != "subagent" {
		t.Errorf("the sub-agent file's kind %v", kind)
	}
	var spawned, ran bool
	for _, m := range geminiMessages(t, mains[0]) {
		c := at(m, "toolCalls", 0)
		spawned = spawned || at(c, "id") == "invoke_agent__"+spawn && at(c, "status") == "success"
	}
	for _, m := range geminiMessages(t, children[0]) {
		if c := at(m, "toolCalls", 0); at(c, "id") == "run_shell_command__"+shell {
			ran = at(c, "status") == "success" && at(c, "result", 0, "functionResponse", "id") == "run_shell_command__"+shell
			wantUsage(t, "the sub-agent's tool turn", geminiUsage(at(m, "tokens")), sub)
		}
	}
	if !spawned || !ran {
		logRun(t, r, srv)
		t.Fatalf("the session's invoke_agent call done %v, the sub-agent's shell call with its result %v", spawned, ran)
	}
}
