package gate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// The suggestions Claude Code sent with a real PermissionRequest (the
// fixture) are offered in words, and only a request that carries some can
// be approved with Always.
func TestAlwaysAllowOffered(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testkit.Fixtures(t, "agents"), "claude-code", "hooks", "noid-1796409108453494777.PermissionRequest.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), `"permission_suggestions":`)
	sugg := strings.TrimSuffix(strings.TrimSpace(rest), "}")
	h, p := newHook(t)
	ctx := context.Background()
	offered, err := h.Ask(ctx, Request{Agent: AgentClaudeCode, Event: "PermissionRequest", SessionID: "s1", Tool: "Bash",
		Input: `{"command":"touch permreq.txt"}`, Suggestions: sugg})
	if err != nil {
		t.Fatal(err)
	}
	plain := ask(t, h)
	src := open(t, p)
	q, err := src.Request(ctx, store.RequestKey{Kind: store.Approval, ID: "1"})
	if want := "allow the directory /home/dev/work/claude for this session; switch to acceptEdits mode for this session"; err != nil || q.AlwaysAllow != want {
		t.Fatalf("always-allow %q (%v), want %q", q.AlwaysAllow, err, want)
	}
	_, err = src.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: plain}, Verdict: store.VerdictApprove, Always: true})
	if !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("Always on a request that offers nothing: %v", err)
	}
	res, err := src.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "1"}, Verdict: store.VerdictApprove, Always: true})
	if err != nil || !res.Won {
		t.Fatal(res, err)
	}
	if row, err := h.Get(ctx, offered); err != nil || !row.Always || row.State != StateApproved {
		t.Errorf("row %+v %v", row, err)
	}
}

// A gate store an earlier vigil made (without the suggestions and always
// columns, written here by the sqlite3 CLI) is read as it is, and the
// first newer hook adds the columns without losing a row.
func TestEarlierGateStore(t *testing.T) {
	testkit.Tool(t, "sqlite3", "an earlier gate store is made with the sqlite3 CLI")
	p := filepath.Join(t.TempDir(), FileName)
	old := strings.Replace(schema, ",\n\tsuggestions TEXT NOT NULL DEFAULT '',\n\talways INTEGER NOT NULL DEFAULT 0", "", 1)
	if old == schema {
		t.Fatal("the schema no longer ends with the added columns")
	}
	sql := "PRAGMA journal_mode=WAL;" + old + `; INSERT INTO gate_requests (agent, event, session_id, tool, input, asked_at, pid, state, decided_by)
		VALUES ('claude-code', 'PreToolUse', 's1', 'Bash', '{"command":"ls"}', 1, 1, 'approved', 'ann');`
	if out, err := exec.Command("sqlite3", p, sql).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	src := open(t, p)
	ctx := context.Background()
	qs, err := src.Requests(ctx, false)
	if err != nil || len(qs) != 1 || qs[0].DecidedBy != "ann" || qs[0].AlwaysAllow != "" {
		t.Fatalf("requests of an earlier store %+v %v", qs, err)
	}
	h, err := OpenHook(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Ask(ctx, Request{Agent: AgentClaudeCode, Event: "PermissionRequest", SessionID: "s1", Tool: "Bash",
		Input: "{}", Suggestions: `[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`}); err != nil {
		t.Fatal(err)
	}
	qs, err = src.Requests(ctx, false)
	if err != nil || len(qs) != 2 || qs[1].AlwaysAllow != "switch to acceptEdits mode for this session" {
		t.Fatalf("after a newer hook: %+v %v", qs, err)
	}
}
