package agentcli

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// shellCalls is each CLI's shell tool writing out.txt.
var shellCalls = map[string]modelserver.Call{
	"claude-code": {Name: "Bash", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}},
	"codex":       {Name: "exec_command", Args: map[string]any{"cmd": "echo hi > out.txt"}},
	"gemini-cli":  {Name: "run_shell_command", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}},
	"opencode":    {Name: "bash", Args: map[string]any{"command": "echo hi > out.txt", "description": "write out.txt"}},
}

// TestLiveRunIsOnDiskBeforeItEnds holds each CLI's final turn back and
// checks that, while the CLI waits for it, its files already hold the
// tool call: what a reader tailing a live run relies on.
func TestLiveRunIsOnDiskBeforeItEnds(t *testing.T) {
	const slow = 4 * time.Second
	for _, name := range []string{"claude-code", "codex", "gemini-cli", "opencode"} {
		t.Run(name, func(t *testing.T) {
			a := Need(t, name)
			srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
				{Calls: []modelserver.Call{shellCalls[name]}, Usage: toolUsage},
				{Text: "Wrote out.txt at last.", Usage: finalUsage, Delay: slow},
			}}})
			run := a.Start(t, srv.URL, "Write hi to out.txt. [vigil:main]", 120*time.Second)
			var asked time.Time
			for asked.IsZero() && !run.Exited() {
				for _, q := range srv.Requests() {
					if q.Conversation == 0 && q.Turn == 1 {
						asked = q.At
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			if asked.IsZero() {
				r := run.Wait()
				logRun(t, r, srv)
				t.Fatalf("%s exited before asking for its final turn", name)
			}
			ids := srv.Served()
			var onDisk bool
			for !onDisk && time.Since(asked) < slow/2 {
				onDisk = storeHolds(run.Store(), ids[0])
				time.Sleep(20 * time.Millisecond)
			}
			live := !run.Exited()
			r := run.Wait()
			if !onDisk || !live {
				logRun(t, r, srv)
				t.Fatalf("while the final turn was held back: call %s on disk %v, %s still running %v", ids[0], onDisk, name, live)
			}
			if r.Err != nil || !storeHolds(r.Store(a), "Wrote out.txt at last.") {
				logRun(t, r, srv)
				t.Fatalf("after the slow turn: exit %v, final text on disk %v", r.Err, storeHolds(r.Store(a), "Wrote out.txt at last."))
			}
		})
	}
}

// storeHolds reports whether any of the files (or an SQLite file's WAL
// beside it) holds s, read as bytes: no SQLite connection is opened to a
// database a live CLI is writing.
func storeHolds(files []string, s string) bool {
	for _, f := range files {
		for _, p := range []string{f, f + "-wal"} {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}
