package agentcli

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// readJSONL is every line of a JSONL file, decoded; a line that does not
// decode fails the test (the CLIs finished: no line is still being written).
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks m by keys and list indexes: at(m, "message", "usage").
func at(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// num is a JSON number as an int (-1 when it is not one).
func num(v any) int {
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(f)
}

// wantUsage compares the four figures a file says with what the server
// reported.
func wantUsage(t *testing.T, where string, got, want modelserver.Usage) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: usage %+v, the server reported %+v", where, got, want)
	}
}

// filterFiles is the files whose path contains part.
func filterFiles(files []string, part string) []string {
	var out []string
	for _, f := range files {
		if strings.Contains(f, part) {
			out = append(out, f)
		}
	}
	return out
}

// without is the files whose path does not contain part.
func without(files []string, part string) []string {
	var out []string
	for _, f := range files {
		if !strings.Contains(f, part) {
			out = append(out, f)
		}
	}
	return out
}

func logRun(t *testing.T, r *Result, srv *modelserver.Server) {
	t.Helper()
	t.Logf("started %s, took %s; stdout:\n%s\nstderr:\n%s", r.Started.Format("15:04:05.000"), r.Took, tail(r.Stdout), tail(r.Stderr))
	for _, q := range srv.Requests() {
		t.Logf("%s %s %s %s conv=%d turn=%d tools=%d items=%d calls=%v", q.At.Format("15:04:05.000"), q.Method, q.Path, q.Protocol, q.Conversation, q.Turn, q.Tools, len(q.Items), q.CallIDs)
	}
}

// shellScript is the test's first script: one shell call writing out.txt,
// then a final text, each with its usage.
func shellScript(call modelserver.Call, tool, final modelserver.Usage) modelserver.Script {
	return modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{call}, Usage: tool},
		{Text: "Wrote out.txt.", Usage: final},
	}}}
}

var (
	toolUsage  = modelserver.Usage{Input: 1200, Output: 30, CacheRead: 100, CacheWrite: 50}
	finalUsage = modelserver.Usage{Input: 1300, Output: 40, CacheRead: 200, CacheWrite: 60}
)

// checkShellRun checks what every CLI's shell run must show: it exited 0,
// out.txt holds hi, the CLI sent the call's result back.
func checkShellRun(t *testing.T, r *Result, srv *modelserver.Server) (callID string) {
	t.Helper()
	if r.Err != nil {
		logRun(t, r, srv)
		t.Fatalf("exit: %v", r.Err)
	}
	if b, err := os.ReadFile(r.Work + "/out.txt"); err != nil || strings.TrimSpace(string(b)) != "hi" {
		logRun(t, r, srv)
		t.Fatalf("out.txt: %q, %v", b, err)
	}
	ids := srv.Served()
	if len(ids) != 1 {
		logRun(t, r, srv)
		t.Fatalf("the server handed out calls %v, want one", ids)
	}
	return ids[0]
}

// str is a JSON string ("" when it is not one).
func str(v any) string {
	s, _ := v.(string)
	return s
}

var subUsage = modelserver.Usage{Input: 900, Output: 20, CacheRead: 10, CacheWrite: 5}

// subScript is the sub-agent script: the parent calls its sub-agent tool
// (spawn), then takes the turns parentAfter (text as often as the CLI
// asks: after the launch, after the child's result); the child, matched
// by the prompt spawn gave it, makes one shell call writing sub.txt and
// ends with childEnd (text, or the call that ends a sub-agent).
func subScript(spawn modelserver.Call, parentAfter []modelserver.Turn, shell modelserver.Call, childEnd modelserver.Turn, sub modelserver.Usage) modelserver.Script {
	return modelserver.Script{
		{Match: "[vigil:main]", Turns: append([]modelserver.Turn{{Calls: []modelserver.Call{spawn}, Usage: toolUsage}}, parentAfter...)},
		{Match: "[vigil:sub]", Turns: []modelserver.Turn{{Calls: []modelserver.Call{shell}, Usage: sub}, childEnd}},
	}
}

var childText = modelserver.Turn{Text: "Wrote sub.txt."}

const subPrompt = "Write sub to sub.txt. [vigil:sub]"

// callsOf is the call ids the server handed to one conversation.
func callsOf(srv *modelserver.Server, conv int) []string {
	var ids []string
	for _, r := range srv.Requests() {
		if r.Conversation == conv {
			ids = append(ids, r.CallIDs...)
		}
	}
	return ids
}

// checkSubRun checks what every sub-agent run must show: it exited 0, the
// child wrote sub.txt, the parent's spawn call and the child's shell call
// (each one's first) got their results back. It returns the two call ids.
func checkSubRun(t *testing.T, r *Result, srv *modelserver.Server) (spawn, shell string) {
	t.Helper()
	if r.Err != nil {
		logRun(t, r, srv)
		t.Fatalf("exit: %v", r.Err)
	}
	if b, err := os.ReadFile(r.Work + "/sub.txt"); err != nil || strings.TrimSpace(string(b)) != "sub" {
		logRun(t, r, srv)
		t.Fatalf("sub.txt: %q, %v", b, err)
	}
	parent, child := callsOf(srv, 0), callsOf(srv, 1)
	if len(parent) < 1 || len(child) < 1 {
		logRun(t, r, srv)
		t.Fatalf("calls served: parent %v, child %v; want the spawn and the shell call first", parent, child)
	}
	for _, id := range []string{parent[0], child[0]} {
		if _, ok := srv.ToolResult(id); !ok {
			logRun(t, r, srv)
			t.Fatalf("no result came back for %s", id)
		}
	}
	return parent[0], child[0]
}
