package agentcli

import (
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

func TestOpencodeShellCall(t *testing.T) {
	a := Need(t, "opencode")
	tool, final := toolUsage, finalUsage
	tool.CacheWrite, final.CacheWrite = 0, 0
	srv := modelserver.Start(t, shellScript(modelserver.Call{Name: "bash",
		Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}}, tool, final))
	r := a.Run(t, srv.URL, "Write hi to out.txt. [vigil:main]", 120*time.Second)
	id := checkShellRun(t, r, srv)
	if _, ok := srv.ToolResult(id); !ok {
		t.Errorf("opencode sent no result for %s", id)
	}
	files := r.Store(a)
	if len(files) != 1 {
		t.Fatalf("databases %v, want one", files)
	}
	var sawCall bool
	var usages []modelserver.Usage
	for _, p := range opencodeParts(t, files[0], "parent_id IS NULL") {
		switch at(p, "type") {
		case "tool":
			if at(p, "callID") == id {
				st := at(p, "state")
				sawCall = at(p, "tool") == "bash" && at(st, "status") == "completed" &&
					at(st, "input", "command") == "echo hi > out.txt" && at(st, "metadata", "exit") == 0.0
			}
		case "step-finish":
			usages = append(usages, opencodeUsage(at(p, "tokens")))
		}
	}
	if !sawCall || len(usages) != 2 {
		logRun(t, r, srv)
		t.Fatalf("%s: completed tool call %v, step usages %v", files[0], sawCall, usages)
	}
	wantUsage(t, "the tool step", usages[0], tool)
	wantUsage(t, "the final step", usages[1], final)
}

// opencodeParts is the parts (decoded) of the sessions the condition on
// the session table selects, in the order they were created. The CLI has
// exited: this process is the database's only user.
func opencodeParts(t *testing.T, db, where string, args ...any) []map[string]any {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT data FROM part WHERE session_id IN (SELECT id FROM session WHERE `+where+`) ORDER BY time_created, id`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var data string
		var p map[string]any
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			t.Fatalf("%s: a part: %v", db, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// opencodeUsage is a step's tokens in the server's terms: opencode keeps
// the input without the cached part the server counted in it.
func opencodeUsage(v any) modelserver.Usage {
	read := num(at(v, "cache", "read"))
	return modelserver.Usage{Input: num(at(v, "input")) + read, Output: num(at(v, "output")),
		CacheRead: read, CacheWrite: num(at(v, "cache", "write"))}
}

func TestOpencodeSubAgent(t *testing.T) {
	a := Need(t, "opencode")
	sub := subUsage
	sub.CacheWrite = 0
	srv := modelserver.Start(t, subScript(
		modelserver.Call{Name: "task", Args: map[string]any{"description": "sub task", "subagent_type": "general", "prompt": subPrompt}},
		[]modelserver.Turn{{Text: "All done."}},
		modelserver.Call{Name: "bash", Args: map[string]any{"command": "echo sub > sub.txt", "description": "write sub.txt"}}, childText, sub))
	r := a.Run(t, srv.URL, "Delegate to a sub-agent. [vigil:main]", 120*time.Second)
	spawn, shell := checkSubRun(t, r, srv)
	files := r.Store(a)
	if len(files) != 1 {
		t.Fatalf("databases %v, want one", files)
	}
	var spawned, childID string
	for _, p := range opencodeParts(t, files[0], "parent_id IS NULL") {
		if at(p, "type") == "tool" && at(p, "callID") == spawn && at(p, "state", "status") == "completed" {
			spawned, childID = str(at(p, "tool")), str(at(p, "state", "metadata", "sessionId"))
		}
	}
	if spawned != "task" || childID == "" {
		logRun(t, r, srv)
		t.Fatalf("the session's task call %s: tool %q, child session %q", spawn, spawned, childID)
	}
	var ran bool
	var usages []modelserver.Usage
	for _, p := range opencodeParts(t, files[0], "id = ? AND parent_id IS NOT NULL", childID) {
		switch at(p, "type") {
		case "tool":
			ran = ran || at(p, "callID") == shell && at(p, "state", "status") == "completed" && at(p, "state", "input", "command") == "echo sub > sub.txt"
		case "step-finish":
			usages = append(usages, opencodeUsage(at(p, "tokens")))
		}
	}
	if !ran || len(usages) != 2 {
		logRun(t, r, srv)
		t.Fatalf("child session %s: the shell call completed %v, step usages %v", childID, ran, usages)
	}
	wantUsage(t, "the child's tool step", usages[0], sub)
}
