package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// With no store named, vigil reads every agent CLI's store where that CLI
// keeps it, beside the harness stores, as one set, and says which it read
// (issue 27: "finds these stores where the CLIs keep them … and says what
// it found"). Discovery tests change the working directory: not parallel.
func TestDiscoveryFindsTheAgentCLIsStores(t *testing.T) {
	claude := testkit.Fixtures(t, "agents/claude-code/transcript")
	codex := testkit.Fixtures(t, "agents/codex/rollout")
	t.Chdir(t.TempDir())
	home := t.TempDir()
	const session = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	project := filepath.Join(home, ".claude", "projects", "-home-dev-work")
	testkit.CopyFile(t, filepath.Join(claude, "main-session.jsonl"), filepath.Join(project, session+".jsonl"))
	const rollout = "parent-rollout-2026-12-04T18-35-45-01a24257-4441-7b61-b0b0-d01415b98758.jsonl"
	testkit.CopyFile(t, filepath.Join(codex, rollout), filepath.Join(home, ".codex", "sessions", "2026", "12", "04", strings.TrimPrefix(rollout, "parent-")))

	h := newHarness(t)
	h.env = []string{"HOME=" + home}
	r := h.run("runs", "--json")
	r.wantCode(t, 0)
	contains(t, r.stderr, "reading the 2 found: "+filepath.Join(home, ".claude")+", "+filepath.Join(home, ".codex", "sessions"))
	contains(t, r.stdout, session)
	contains(t, r.stdout, "01a24257-4441-7b61-b0b0-d01415b98758")

	// Named, only the one named is read; found alone, it is read as before.
	r = h.run("runs", "--json", "--store", filepath.Join(home, ".claude"))
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, "01a24257-4441-7b61-b0b0-d01415b98758") || r.stderr != "" {
		t.Errorf("--store read more than the store named:\n%s\n%s", r.stdout, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(home, ".codex")); err != nil {
		t.Fatal(err)
	}
	r = h.run("runs", "--json")
	r.wantCode(t, 0)
	contains(t, r.stdout, session)
	if strings.Contains(r.stderr, "found") {
		t.Errorf("one store found is read without a note: %q", r.stderr)
	}
}

// Nothing found: the agent CLIs' places are among those named.
func TestDiscoveryNamesTheAgentCLIsPlaces(t *testing.T) {
	t.Chdir(t.TempDir())
	r := newHarness(t).run("runs")
	r.wantCode(t, ExitError)
	for _, place := range []string{"~/.claude ", "~/.codex/sessions ", "~/.gemini"} {
		contains(t, r.stderr, "\n  "+place)
	}
}

// trace and diff read a format with no canonical trace of its own through
// vigil's steps trace (store.Complete): a Claude Code session and its
// sub-agent, step by step, their calls by tool and arguments.
func TestTraceAndDiffOnAnAgentCLIStore(t *testing.T) {
	claude := testkit.Fixtures(t, "agents/claude-code/transcript")
	cfg := filepath.Join(t.TempDir(), ".claude")
	const session = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	project := filepath.Join(cfg, "projects", "-home-dev-work")
	testkit.CopyFile(t, filepath.Join(claude, "main-session.jsonl"), filepath.Join(project, session+".jsonl"))
	for _, n := range []string{"agent-adacfd069ace754ac.jsonl", "agent-adacfd069ace754ac.meta.json"} {
		testkit.CopyFile(t, filepath.Join(claude, "subagents", n), filepath.Join(project, session, "subagents", n))
	}
	h := newHarness(t)
	r := h.run("trace", "--store", cfg, session)
	r.wantCode(t, 0)
	contains(t, r.stdout, "step 1 | tokens 1230 | decision tool_use | tool_call Agent {")
	if strings.Contains(r.stdout, "toolu_") {
		t.Errorf("the trace names a call by its id:\n%s", r.stdout)
	}
	r = h.run("diff", "--store", cfg, session, "agent-adacfd069ace754ac")
	r.wantCode(t, 1)
	contains(t, r.stdout, "step 1")
}
