package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// vigil tail on a live Claude Code session: a turn whose call runs is
// printed as running when it is written, and its line with the result and
// tokens follows once the result is written, each once; a tail started
// while the call runs prints it running too, then its completion.
func TestTailClaudeCodeTurnRunningThenDone(t *testing.T) {
	claude := testkit.Fixtures(t, "agents/claude-code/transcript")
	cfg := filepath.Join(t.TempDir(), ".claude")
	const sid = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	file := filepath.Join(cfg, "projects", "-home-dev-work", sid+".jsonl")
	testkit.CopyFile(t, filepath.Join(claude, "main-session.jsonl"), file)
	// Live while this process lives: the registry names the session.
	reg := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"startedAt":%d}`, os.Getpid(), sid, time.Now().UnixMilli())
	if err := os.MkdirAll(filepath.Join(cfg, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "sessions", "1.json"), []byte(reg), 0o600); err != nil {
		t.Fatal(err)
	}
	appendLine := func(s string) {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s + "\n"); err != nil {
			t.Fatal(err)
		}
	}

	tl := startTail(t, "tail", sid, "--store", cfg, "--poll", "20ms")
	tl.waitLine(t, "#"+sid+" step 3  end_turn  →  All done after 1 tool call(s).  (1330 tokens)")
	appendLine(`{"type":"assistant","timestamp":"2026-12-04T18:40:00Z","message":{"id":"msg_t1","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_x","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`)
	running := "#" + sid + ` step 4  running  Bash {"command":"ls"}`
	tl.waitLine(t, running)
	appendLine(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"a.txt"}]}}`)
	done := "#" + sid + " step 4  tool_use  →  a.txt  (19 tokens)"
	tl.waitLine(t, done)
	out := tl.out.String()
	if strings.Count(out, running+"\n") != 1 || strings.Count(out, done+"\n") != 1 || strings.Index(out, running) > strings.Index(out, done) {
		t.Errorf("the running turn, then its completion, once each:\n%s", out)
	}

	appendLine(`{"type":"assistant","timestamp":"2026-12-04T18:41:00Z","message":{"id":"msg_t2","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_y","name":"Bash","input":{"command":"sleep 9"}}],"usage":{"input_tokens":20,"output_tokens":2}}}`)
	late := startTail(t, "tail", sid, "--store", cfg, "--poll", "20ms")
	running = "#" + sid + ` step 5  running  Bash {"command":"sleep 9"}`
	late.waitLine(t, running)
	appendLine(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_y","content":"slept"}]}}`)
	done = "#" + sid + " step 5  tool_use  →  slept  (22 tokens)"
	late.waitLine(t, done)
	tl.waitLine(t, done)
	out = late.out.String()
	if strings.Count(out, running+"\n") != 1 || strings.Count(out, done+"\n") != 1 || strings.Index(out, running) > strings.Index(out, done) {
		t.Errorf("a tail started while the call ran:\n%s", out)
	}
}
