package agentcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

func TestClaudeCodeSubAgent(t *testing.T) {
	a := Need(t, "claude-code")
	srv := modelserver.Start(t, subScript(
		modelserver.Call{Name: "Agent", Args: map[string]any{"description": "sub task", "subagent_type": "general-purpose", "prompt": subPrompt}},
		[]modelserver.Turn{{Text: "Launched."}, {Text: "All done."}},
		modelserver.Call{Name: "Bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "write sub.txt"}}, childText, subUsage))
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	spawn, shell := checkSubRun(t, r, srv)
	files := r.Store(a)
	children := filterFiles(files, "/subagents/")
	if len(files) != 2 || len(children) != 1 {
		t.Fatalf("transcripts %v: want the session's and one sub-agent's", files)
	}
	agentID := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(children[0]), "agent-"), ".jsonl")
	var meta map[string]any
	if b, err := os.ReadFile(strings.TrimSuffix(children[0], ".jsonl") + ".meta.json"); err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("the sub-agent's meta: %s, %v", b, err)
	}
	if meta["toolUseId"] != spawn {
		t.Errorf("meta.json links tool use %v, the Agent call was %s", meta["toolUseId"], spawn)
	}
	var launched bool
	for _, l := range readJSONL(t, without(files, "/subagents/")[0]) {
		if b := at(l, "message", "content", 0); at(l, "type") == "user" && at(b, "tool_use_id") == spawn {
			launched = at(l, "toolUseResult", "agentId") == agentID
		}
	}
	if !launched {
		t.Errorf("the session has no result for %s naming agent %s", spawn, agentID)
	}
	var sawCall, sawResult bool
	for _, l := range readJSONL(t, children[0]) {
		if typ := at(l, "type"); (typ == "user" || typ == "assistant") && at(l, "isSidechain") != true {
			t.Errorf("a sub-agent's %s line not on the side chain: %.300v", typ, l)
		}
		b := at(l, "message", "content", 0)
		switch {
		case at(b, "type") == "tool_use" && at(b, "id") == shell:
			sawCall = at(b, "input", "command") == "echo sub > sub.txt"
			wantUsage(t, "the sub-agent's tool turn", claudeUsage(at(l, "message", "usage")), subUsage)
		case at(b, "type") == "tool_result" && at(b, "tool_use_id") == shell:
			sawResult = true
		}
	}
	if !sawCall || !sawResult {
		logRun(t, r, srv)
		t.Fatalf("%s: the shell call %v, its result %v", children[0], sawCall, sawResult)
	}
}
