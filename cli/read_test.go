package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store/ioharness"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// normalize replaces what changes from one test run to the next (the
// temporary path, the lease owner and its pid) in JSON output.
func normalize(out, path string) string {
	out = strings.ReplaceAll(out, path, "/STORE/runs.sqlite3")
	out = regexp.MustCompile(`"owner": "[^"]*"`).ReplaceAllString(out, `"owner": "OWNER"`)
	out = regexp.MustCompile(`"pid": \d+`).ReplaceAllString(out, `"pid": 4242`)
	return regexp.MustCompile(`\bpid \d+`).ReplaceAllString(out, `pid 4242`)
}

func TestRunsTable(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("runs", "--store", p)
	r.wantCode(t, 0)
	if r.stderr != "" {
		t.Fatalf("stderr: %q", r.stderr)
	}
	golden.RequireEqual(t, r.stdout)
}

// TestRunsJSON pins the JSON shape of `vigil runs --json`.
func TestRunsJSON(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("runs", "--json", "--store", p)
	r.wantCode(t, 0)
	golden.RequireEqual(t, normalize(r.stdout, p))

	var doc jsonRuns
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, run := range doc.Runs {
		states[run.ID] = run.State
	}
	// Finished, paused (deferred), and a live tree waiting on a human.
	want := map[string]string{"1": "finished", "2": "finished", "3": "paused", "4": "waiting", "5": "waiting", "6": "running", "7": "waiting"}
	for id, st := range want {
		if states[id] != st {
			t.Errorf("run %s is %q, want %q", id, states[id], st)
		}
	}
	if doc.Runs[0].ID != "7" || doc.Runs[len(doc.Runs)-1].ID != "1" {
		t.Errorf("not newest first: %s … %s", doc.Runs[0].ID, doc.Runs[len(doc.Runs)-1].ID)
	}
}

func TestShowText(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	r := h.run("show", "4", "--store", p)
	r.wantCode(t, 0)
	golden.RequireEqual(t, normalize(r.stdout, p))

	// A child: its steps carry a model's escape sequences, made visible.
	r = h.run("show", "5", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "run 5  worker: update CHANGELOG.md for v2.0", "parent     4 (tree 4 › 5)",
		"git log v1.9.0..HEAD ␛]0;pwned␇(86 commits)", "approval:2  run 5, step 3  [deliverable]")
	if !sanitize.Safe(r.stdout) {
		t.Fatalf("show printed control characters:\n%q", r.stdout)
	}
}

// TestShowJSON pins the JSON shape of `vigil show --json`.
func TestShowJSON(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("show", "4", "--json", "--store", p)
	r.wantCode(t, 0)
	golden.RequireEqual(t, normalize(r.stdout, p))

	var doc jsonShow
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tree) != 4 || len(doc.Steps) != 4 || len(doc.Context) != 4 || len(doc.Requests) != 4 {
		t.Fatalf("tree %d, steps %d, context %d, requests %d", len(doc.Tree), len(doc.Steps), len(doc.Context), len(doc.Requests))
	}
	if doc.Context[2].Reported != nil || doc.Context[2].Drift != nil {
		t.Errorf("an unreported turn reads as reported: %+v", doc.Context[2])
	}
	kinds := map[string]bool{}
	for _, q := range doc.Requests {
		kinds[q.Key] = true
		if q.Delivery != "deliverable" {
			t.Errorf("%s: delivery %q", q.Key, q.Delivery)
		}
	}
	for _, k := range []string{"approval:2", "approval:3", "question:1", "plan:1"} {
		if !kinds[k] {
			t.Errorf("missing request %s", k)
		}
	}
}

func TestShowMarkdown(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("show", "4", "--markdown", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout,
		"# Run 4: Coordinate the v2.0 release\n",
		"## Tree\n", "| Agent | Depth | State | Steps | Tokens | Waiting | Goal |",
		"| └─ 6 | 1 | running |",
		"## Steps\n", "| 2 | spawned child 5; spawned child 6 | `spawn_agent:{\"as\":\"changelog\"} \\| spawn_agent:{\"as\":\"versions\"}` |",
		"## Context\n", "| 3 | 2,200 | *missing* |  |  |",
		"## Open requests\n", "### approval:2\n", "write `CHANGELOG.md`", "```text\n## v2.0.0 — 2026-11-29\n",
		"### question:1\n", "> Keep the replace line for ./internal/tools?", "- keep it\n",
		"### plan:1\n", "2. publish the release notes (changelog)\n")
	if !sanitize.Safe(r.stdout) {
		t.Fatal("markdown holds control characters")
	}
	r = newHarness(t).run("show", "5", "--markdown", "--store", p)
	r.wantCode(t, 0)
	if !sanitize.Safe(r.stdout) {
		t.Fatalf("markdown holds control characters:\n%q", r.stdout)
	}
}

func TestShowFlags(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	h.run("show", "4", "--json", "--markdown", "--store", p).wantCode(t, ExitUsage)
	r := h.run("show", "99", "--store", p)
	r.wantCode(t, ExitError)
	r.oneLine(t, "no such run: 99")
}

func TestTraceEqualsCanonicalTrace(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	s, err := ioharness.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{"1", "5"} {
		want, err := s.CanonicalTrace(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		r := newHarness(t).run("trace", id, "--raw", "--store", p)
		r.wantCode(t, 0)
		if r.stdout != want {
			t.Fatalf("trace %s --raw:\n%q\nwant\n%q", id, r.stdout, want)
		}
		// Without --raw, the same trace with its controls made visible
		// (run 5's decision tries to set the window title).
		r = newHarness(t).run("trace", id, "--store", p)
		r.wantCode(t, 0)
		if r.stdout != sanitize.Text(want) || !sanitize.Safe(r.stdout) {
			t.Fatalf("trace %s:\n%q\nwant\n%q", id, r.stdout, sanitize.Text(want))
		}
		if id == "5" && r.stdout == want {
			t.Fatal("the fixture's run 5 should hold escape sequences")
		}
	}
	newHarness(t).run("trace", "99", "--store", p).wantCode(t, ExitError)
}

func TestDiff(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	w := writer(t, p)
	ctx := context.Background()
	// Two runs of one task that part at step 3.
	var ids []string
	for _, third := range []string{"ran go test ./... (exit 0)", "ran go test ./... (exit 1)"} {
		id, err := w.StartRun(ctx, "Fix the build", "/work/shop")
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range []string{"read main.go", "wrote main.go", third, "finished"} {
			if err := w.CheckpointStep(ctx, id, twin.StepRecord{Step: i + 1, Decision: d, Result: "[ok]\nline two", Prompt: "Goal: fix.\n", Tokens: 100}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	h := newHarness(t)
	r := h.run("diff", ids[0], ids[1], "--store", p)
	r.wantCode(t, 1) // like diff(1): the runs differ
	contains(t, r.stdout, "--- run "+ids[0]+"\n+++ run "+ids[1]+"\n",
		"first divergence: step 3 (decision)\n",
		"= 2 identical step(s)\n",
		"@@ step 3 @@  <- first divergence\n- decision: ran go test ./... (exit 0)\n+ decision: ran go test ./... (exit 1)\n",
		"= 1 identical step(s)\n")

	r = h.run("diff", ids[0], ids[0], "--store", p)
	r.wantCode(t, 0)
	if !strings.HasPrefix(r.stdout, "identical") {
		t.Fatalf("a run against itself: %q", r.stdout)
	}

	// A run that stops early: the missing steps are marked as such.
	r = h.run("diff", "1", "2", "--store", p)
	r.wantCode(t, 1)
	contains(t, r.stdout, "first divergence: step 1 (tokens, decision, tool_call, result)", "@@ step 3 @@  only in run 1\n")
	h.run("diff", "1", "99", "--store", p).wantCode(t, ExitError)
}

// show --json is written a member at a time: byte for byte what encoding
// the whole jsonShow would write.
func TestShowJSONStreamed(t *testing.T) {
	p := fixtureStore(t)
	a := newApp(strings.NewReader(""), io.Discard, io.Discard, nil)
	src, err := openSource(p, true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, id := range []string{"1", "4", "7"} {
		sh, err := a.loadShown(context.Background(), src, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := sh.loadDetails(context.Background(), src); err != nil {
			t.Fatal(err)
		}
		var whole, streamed bytes.Buffer
		if err := writeJSON(&whole, sh.json()); err != nil {
			t.Fatal(err)
		}
		if err := sh.writeJSON(&streamed); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Fatalf("run %s: streamed\n%s\nwhole\n%s", id, streamed.String(), whole.String())
		}
	}
}
