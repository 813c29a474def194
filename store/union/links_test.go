package union

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/claudecode"
	"github.com/vigil-run/vigil/store/gate"
)

const linkSession = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b" // the fixture transcript's

// A gate request names the Claude Code session and tool call it gates; in
// a set that also reads that session's store, the request links to the
// session's run there — also when the request is read before the session
// (its file appears later): the request comes again, linked, with the
// changes that bring the run.
func TestGateRequestLinksToItsSession(t *testing.T) {
	dir := t.TempDir()
	projects := filepath.Join(dir, ".claude", "projects", "-work")
	testkit.CopyFile(t, filepath.Join(testkit.Fixtures(t, "agents"), "claude-code", "transcript", "main-session.jsonl"),
		filepath.Join(projects, "other.jsonl"))
	h, err := gate.OpenHook(filepath.Join(dir, "state", gate.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	if _, err := h.Ask(ctx, gate.Request{Agent: gate.AgentClaudeCode, Event: "PreToolUse", SessionID: linkSession,
		Tool: "Bash", Input: `{"command":"ls"}`, ToolUseID: "toolu_e89e3a671ec9422db0ac"}); err != nil {
		t.Fatal(err)
	}
	claude, g := open(t, filepath.Join(dir, ".claude")), open(t, h.Path())
	set, err := New([]Member{{Name: filepath.Join(dir, ".claude"), Source: claude}, {Name: h.Path(), Source: g}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	u := set.Source()
	cur, err := u.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Runs(ctx); err != nil {
		t.Fatal(err)
	}
	reqs, err := u.Requests(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	q := only(t, reqs)
	if q.For.InSet || q.For.RunID != linkSession || q.For.CallID != "toolu_e89e3a671ec9422db0ac" || q.For.Format != "claude-code" {
		t.Fatalf("before its session is read, the request links to %+v", q.For)
	}

	// The session's transcript lands (copied under its own name).
	testkit.CopyFile(t, filepath.Join(testkit.Fixtures(t, "agents"), "claude-code", "transcript", "main-session.jsonl"),
		filepath.Join(projects, linkSession+".jsonl"))
	var linked *store.Request
	var ch *store.Changes
	for deadline := time.Now().Add(20 * time.Second); linked == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ch, cur, err = u.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range ch.Requests {
			if q.For.InSet {
				linked = &q
			}
		}
	}
	if linked == nil {
		t.Fatal("the request never came again linked to its session")
	}
	if ok, err := u.HasRun(ctx, linked.For.RunID); !ok || err != nil {
		t.Fatalf("the request links to %q, which is no run of the set (%v)", linked.For.RunID, err)
	}
	// A whole read links it at once.
	reqs, err = u.Requests(ctx, true)
	if err != nil || !only(t, reqs).For.InSet || only(t, reqs).For.RunID != linked.For.RunID {
		t.Fatalf("a whole read: %+v %v", reqs, err)
	}
}

func only(t *testing.T, reqs []store.Request) store.Request {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("want one request, have %+v", reqs)
	}
	return reqs[0]
}

// A request kept waiting for its run, then read again decided (its run
// still unknown, then known): the older, waiting read is never given again
// when the run's changes come.
func TestLinkNeverGivesAStaleRead(t *testing.T) {
	s := &Set{}
	waiting := store.Request{Kind: store.Approval, ID: "g/1", For: store.RunLink{Format: "claude-code", RunID: "sid"}}
	s.link([]store.Request{waiting})
	decided := waiting
	decided.Resolved, decided.Decision = true, "approve"
	s.links.mu.Lock()
	s.links.known = map[linkKey]string{{"claude-code", "sid"}: "c/sid"}
	s.links.mu.Unlock()
	batch := []store.Request{decided}
	s.link(batch)
	if !batch[0].For.InSet || batch[0].For.RunID != "c/sid" {
		t.Fatalf("the decided read is not linked: %+v", batch[0].For)
	}
	s.links.mu.Lock()
	n := len(s.links.waiting[linkKey{"claude-code", "sid"}])
	s.links.mu.Unlock()
	if n != 0 {
		t.Fatalf("the waiting read is still kept to give again (%d)", n)
	}
}
