package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/claudecode"
)

// The explorer on a live Claude Code session whose turn runs a call: the
// timeline shows the turn running, whether the explorer was open before
// the turn began (its placeholder comes through Changes) or opened while
// the call ran (Steps), and once the result is written the committed turn
// replaces it: its decision, its call, its tokens, nothing left running.
func TestClaudeCodeTurnRunningThenCommitted(t *testing.T) {
	claude := testkit.Fixtures(t, "agents/claude-code/transcript")
	cfg := filepath.Join(t.TempDir(), ".claude")
	const sid = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	file := filepath.Join(cfg, "projects", "-home-dev-work", sid+".jsonl")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(file), 0o755))
	b, err := os.ReadFile(filepath.Join(claude, "main-session.jsonl"))
	must(err)
	must(os.WriteFile(file, b, 0o644))
	// Live while this process lives: the registry names the session.
	must(os.MkdirAll(filepath.Join(cfg, "sessions"), 0o755))
	reg := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"startedAt":%d}`, os.Getpid(), sid, time.Now().UnixMilli())
	must(os.WriteFile(filepath.Join(cfg, "sessions", "1.json"), []byte(reg), 0o600))
	appendLine := func(s string) {
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		must(err)
		defer f.Close()
		_, err = f.WriteString(s + "\n")
		must(err)
	}
	explorer := func() *driver {
		src, err := claudecode.Open(cfg, store.Options{ReadOnly: true})
		must(err)
		return sourceDriver(t, store.Complete(src), 160, 40)
	}

	before := explorer()
	before.contains("   3 end_turn ")
	appendLine(`{"type":"assistant","timestamp":"2026-12-04T18:40:00Z","message":{"id":"msg_t1","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_x","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}}`)
	during := explorer()
	before.refresh()
	for _, d := range []*driver{before, during} {
		d.contains("   4 … running ", "step 4 · not committed yet")
	}
	appendLine(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"a.txt"}]}}`)
	for _, d := range []*driver{before, during} {
		d.refresh()
		d.contains(`   4 tool_use · Bash {"command":"ls"}`, "step 4 · 19 tokens", "a.txt")
		d.lacks("4 … running", "not committed yet", "   5 ")
	}
}

// sourceDriver is a driver on a source of any format.
func sourceDriver(t *testing.T, src store.Source, w, h int) *driver {
	t.Helper()
	d := &driver{t: t, clock: time.Now(), wait: cmdTimeout}
	d.m = New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return d.clock }, StoreLabel: src.Path()})
	t.Cleanup(func() { d.m.Close(); d.m.src.Close() })
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(d.m.Init())
	return d
}
