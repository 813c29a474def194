package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Codex turn whose shell call runs is printed as it stands (running,
// with its call) and again once its output commits it, with its result
// and tokens; tail ends with the task.
func TestTailCodexRunningCall(t *testing.T) {
	t.Parallel()
	const id = "01a2430c-0000-7000-8000-00000000186a"
	file := filepath.Join(t.TempDir(), "rollout-2026-12-04T18-35-49-"+id+".jsonl")
	head := `{"timestamp":"2026-12-04T18:35:49.104Z","type":"session_meta","payload":{"id":"` + id + `","timestamp":"2026-12-04T18:35:49.076Z","cwd":"/w","source":"exec","model_provider":"mock"}}
{"timestamp":"2026-12-04T18:35:49.200Z","type":"event_msg","payload":{"type":"task_started"}}
{"timestamp":"2026-12-04T18:35:49.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Watch me write a file."}]}}
{"timestamp":"2026-12-04T18:35:50.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 6; echo hi > out.txt\"}","call_id":"call_1"}}
`
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := startTailWith(t, func(a *app) { a.now = time.Now }, "tail", id, "--store", file, "--poll", "20ms")
	tl.waitLine(t, "#"+id+` step 1  running  exec_command {"cmd":"sleep 6; echo hi > out.txt"}`)

	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"timestamp":"2026-12-04T18:35:56.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Process exited with code 0\nOutput:\n"}}
{"timestamp":"2026-12-04T18:35:56.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386},"last_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386}}}}
{"timestamp":"2026-12-04T18:35:57.000Z","type":"event_msg","payload":{"type":"task_complete","duration_ms":7896}}
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tl.waitLine(t, "#"+id+" step 1  tool  →  Process exited with code 0  (4386 tokens)")
	if code := tl.exit(t); code != ExitOK {
		t.Fatalf("exit %d, want %d:\n%s\nstderr:\n%s", code, ExitOK, tl.out.String(), tl.err.String())
	}
	if n := strings.Count(tl.out.String(), " step 1  running "); n != 1 {
		t.Fatalf("the running call printed %d times:\n%s", n, tl.out.String())
	}
}
