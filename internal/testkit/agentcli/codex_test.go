package agentcli

import (
	"encoding/json"
	"strings"
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

func TestCodexSubAgent(t *testing.T) {
	a := Need(t, "codex")
	sub := subUsage
	sub.CacheWrite = 0
	wait := modelserver.Call{Name: "wait_agent", Namespace: "multi_agent_v1", ArgsFrom: func(h []modelserver.Item) any {
		var targets []string
		for _, it := range h {
			var out struct {
				AgentID string `json:"agent_id"`
			}
			if it.Role == "tool" && json.Unmarshal([]byte(it.Text), &out) == nil && out.AgentID != "" {
				targets = append(targets, out.AgentID)
			}
		}
		return map[string]any{"targets": targets, "timeout_ms": 60000}
	}}
	srv := modelserver.Start(t, subScript(
		modelserver.Call{Name: "spawn_agent", Namespace: "multi_agent_v1", Args: map[string]any{"message": subPrompt}},
		[]modelserver.Turn{{Calls: []modelserver.Call{wait}}, {Text: "All done."}},
		modelserver.Call{Name: "exec_command", Args: map[string]any{"cmd": "echo sub > sub.txt"}}, childText, sub))
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	spawn, shell := checkSubRun(t, r, srv)
	files := r.Store(a)
	if len(files) != 2 {
		t.Fatalf("rollouts %v: want the parent's and the child's", files)
	}
	type rollout struct {
		id, parent, spawnedBy string
		results               map[string]string // call id: output
		usage                 []modelserver.Usage
	}
	var parent, child *rollout
	for _, f := range files {
		ro := &rollout{results: map[string]string{}}
		for _, l := range readJSONL(t, f) {
			p := at(l, "payload")
			switch str(at(l, "type")) + "/" + str(at(p, "type")) {
			case "session_meta/":
				ro.id, ro.parent = str(at(p, "id")), str(at(p, "parent_thread_id"))
				ro.spawnedBy = str(at(p, "source", "subagent", "thread_spawn", "parent_thread_id"))
			case "response_item/function_call_output":
				ro.results[str(at(p, "call_id"))] = str(at(p, "output"))
			case "token_usage_record/":
				u := at(p, "usage")
				ro.usage = append(ro.usage, modelserver.Usage{Input: num(at(u, "input_tokens")), Output: num(at(u, "output_tokens")),
					CacheRead: num(at(u, "cached_input_tokens")), CacheWrite: num(at(u, "cache_write_input_tokens"))})
			}
		}
		if ro.parent == "" {
			parent = ro
		} else {
			child = ro
		}
	}
	if parent == nil || child == nil {
		t.Fatalf("%v: want one rollout with a parent_thread_id and one without", files)
	}
	if child.parent != parent.id || child.spawnedBy != parent.id {
		t.Errorf("the child's parent_thread_id %q, thread_spawn's %q; the parent is %q", child.parent, child.spawnedBy, parent.id)
	}
	if !strings.Contains(parent.results[spawn], child.id) {
		t.Errorf("the parent's spawn_agent result %q does not name the child %s", parent.results[spawn], child.id)
	}
	if _, ok := child.results[shell]; !ok {
		t.Errorf("the child's rollout has no result for its shell call %s", shell)
	}
	if len(child.usage) != 2 {
		t.Fatalf("the child's usage records: %v", child.usage)
	}
	wantUsage(t, "the child's tool turn", child.usage[0], sub)
}
