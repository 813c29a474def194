package agentcli

import (
	"net/http"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// TestFailedCallIsRetried fails each CLI's first model call once, with an
// HTTP 500, and checks that the CLI asked again and finished the script.
func TestFailedCallIsRetried(t *testing.T) {
	for _, name := range []string{"claude-code", "codex", "gemini-cli", "opencode"} {
		t.Run(name, func(t *testing.T) {
			a := Need(t, name)
			srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
				{Calls: []modelserver.Call{shellCalls[name]}, Usage: toolUsage, Fail: &modelserver.Failure{Status: http.StatusInternalServerError}},
				{Text: "Wrote out.txt.", Usage: finalUsage},
			}}})
			r := a.Run(t, srv.URL, "Write hi to out.txt. [vigil:main]", 120*time.Second)
			checkShellRun(t, r, srv)
			var first int
			for _, q := range srv.Requests() {
				if q.Conversation == 0 && q.Turn == 0 {
					first++
				}
			}
			if first != 2 {
				logRun(t, r, srv)
				t.Fatalf("the first turn was asked for %d times, want 2 (the failure, the retry)", first)
			}
		})
	}
}
