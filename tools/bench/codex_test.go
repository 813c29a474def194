package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/codex"
)

// The Codex tree is built small here (the bench builds it at size once) and
// read back by python3's json, a reader of its own, and by vigil: the
// sessions/YYYY/MM/DD layout of the start day, every line a record whose
// ordinals run on through a grown session's copies, ids no two sessions
// (and no two copies) share, every time in the session's hour, the
// numbered prompt the bench waits for.
func TestCodexTreeIsBuiltAsSaid(t *testing.T) {
	fixtures := testkit.Fixtures(t, "agents/codex/rollout")
	t.Setenv("VIGIL_SHARED", filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(fixtures)))))
	python := testkit.Tool(t, "python3", "the rollouts are read back by another JSON reader")
	h := codexTree{Sessions: 12, Big: 2, BigBytes: 1 << 20}
	sessions, err := codexTreePath(t.TempDir(), h, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, os, sys
out = []
for d, _, names in os.walk(sys.argv[1]):
    for n in sorted(names):
        p = os.path.join(d, n)
        f = {"path": os.path.relpath(p, sys.argv[1]), "size": os.path.getsize(p), "ordinals": [], "stamps": set(), "calls": [], "prompts": []}
        for l in open(p):
            r = json.loads(l)
            f["ordinals"].append(r["ordinal"])
            f["stamps"].add(r["timestamp"][:13])
            p = r["payload"]
            if r["type"] == "session_meta":
                f["id"], f["parent"] = p["id"], p.get("parent_thread_id", "")
            if r["type"] == "response_item" and p["type"] == "function_call":
                f["calls"].append(p["call_id"])
            if r["type"] == "response_item" and p["type"] == "message" and p["role"] == "user":
                f["prompts"].append(p["content"][0]["text"])
        f["stamps"] = sorted(f["stamps"])
        out.append(f)
print(json.dumps(out))
`
	raw, err := exec.Command(python, "-c", script, sessions).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var files []struct {
		Path, ID, Parent string
		Size             int64
		Ordinals         []int
		Stamps, Calls    []string
		Prompts          []string
	}
	if err := json.Unmarshal(raw, &files); err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*h.Sessions {
		t.Fatalf("%d rollouts, want a parent and a sub-agent for each of %d sessions", len(files), h.Sessions)
	}
	ids, calls := map[string]string{}, map[string]string{}
	big := bigSessions(h.Sessions, h.Big)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		if ids[f.ID] != "" {
			t.Errorf("%s and %s share the thread id %s", f.Path, ids[f.ID], f.ID)
		}
		ids[f.ID] = f.Path
		for i, o := range f.Ordinals {
			if o != i {
				t.Errorf("%s: line %d has ordinal %d", f.Path, i, o)
				break
			}
		}
		for _, c := range f.Calls {
			if calls[c] != "" {
				t.Errorf("%s: call id %s is also %s's", f.Path, c, calls[c])
			}
			calls[c] = f.Path
		}
		if len(f.Stamps) != 1 {
			t.Errorf("%s: lines in hours %v, want one", f.Path, f.Stamps)
			continue
		}
		began, err := time.Parse("2006-01-02T15", f.Stamps[0])
		if err != nil {
			t.Fatal(err)
		}
		n := int(began.Sub(base) / time.Hour)
		if want := began.Format("2006/01/02/rollout-2006-01-02T15-") + "35-4"; !strings.HasPrefix(f.Path, want) || !strings.HasSuffix(f.Path, f.ID+".jsonl") {
			t.Errorf("%s: want %s…-%s.jsonl, as Codex names a rollout", f.Path, want, f.ID)
		}
		if f.Parent != "" {
			continue
		}
		if len(f.Prompts) < 2 || !strings.HasPrefix(f.Prompts[1], fmt.Sprintf("session %d: ", n)) {
			t.Errorf("%s: prompts %q, want session %d's marker", f.Path, f.Prompts, n)
		}
		if grown := f.Size >= h.BigBytes; grown != big[n] || f.Size > h.BigBytes+64<<10 {
			t.Errorf("session %d: %d bytes, grown %v, want grown %v to %d", n, f.Size, grown, big[n], h.BigBytes)
		}
	}
	for _, f := range files {
		if f.Parent != "" && (ids[f.Parent] == "" || filepath.Dir(ids[f.Parent]) != filepath.Dir(f.Path)) {
			t.Errorf("%s: parent %s is not a session of the day", f.Path, f.Parent)
		}
	}

	src, err := store.Open(sessions, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Format() != codex.Format {
		t.Fatalf("opened as %s", src.Format())
	}
	runs, err := src.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2*h.Sessions {
		t.Fatalf("vigil lists %d runs, want %d", len(runs), 2*h.Sessions)
	}
	var newest store.Run
	for _, r := range runs {
		if r.IsRoot() && r.StartedAt.After(newest.StartedAt) {
			newest = r
		}
		if r.Status != store.StatusCompleted || (r.IsRoot() != (r.ParentID == "")) || !r.IsRoot() && ids[r.ParentID] == "" {
			t.Errorf("run %s: status %s parent %q", r.ID, r.Status, r.ParentID)
		}
	}
	if !strings.HasPrefix(newest.Goal, h.newestGoal()) {
		t.Errorf("the newest session's goal is %q, the bench waits for %q", newest.Goal, h.newestGoal())
	}
	for _, r := range runs {
		if !r.IsRoot() || !big[int(r.StartedAt.Sub(base)/time.Hour)] {
			continue
		}
		st, err := src.RunStats(context.Background(), []string{r.ID})
		if err != nil {
			t.Fatal(err)
		}
		if n := st[r.ID].Steps; n < 30 || n%3 != 0 {
			t.Errorf("grown session %s: %d steps, want the fixture's three for each of its tasks", r.ID, n)
		}
	}
}

// The live tree holds the history as hard links of the cached rollouts and
// the newest session as a copy, and the lines appended to it are Codex's
// own (python3's json reads each) and make the step the bench waits for:
// vigil reads the call committed as a tool row once its output is written,
// and the next call running; the cached tree is never written.
func TestCodexLiveAppendsToACopy(t *testing.T) {
	fixtures := testkit.Fixtures(t, "agents/codex/rollout")
	t.Setenv("VIGIL_SHARED", filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(fixtures)))))
	python := testkit.Tool(t, "python3", "the live lines are read back by another JSON reader")
	h := codexTree{Sessions: 6, Big: 0, BigBytes: 1 << 20}
	sessions, err := codexTreePath(t.TempDir(), h, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]os.FileInfo{}
	filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			before[p], _ = os.Stat(p)
		}
		return nil
	})
	l, err := newCodexLive(t.TempDir(), sessions, h)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	src, err := store.Open(l.root, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for i := range 3 {
		marker, _, err := l.appendLine(i)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := src.Steps(context.Background(), l.thread)
		if err != nil {
			t.Fatal(err)
		}
		n := len(steps)
		if n < 2 || !strings.Contains("tool · "+steps[n-2].ToolCall, marker) || steps[n-2].Decision != "tool" || steps[n-2].Pending ||
			!steps[n-1].Pending || !strings.Contains(steps[n-1].ToolCall, fmt.Sprintf("echo live %d", i+1)) {
			t.Fatalf("after line %d the last steps are %+v, want the call committed (%q) and the next running", i, steps[max(n-2, 0):], marker)
		}
	}
	var live string
	filepath.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(l.root, p)
		cached := filepath.Join(sessions, rel)
		fi, _ := os.Stat(p)
		if strings.Contains(p, l.thread) {
			live = p
			if os.SameFile(fi, before[cached]) {
				t.Errorf("the live session %s is the cached file", rel)
			}
		} else if !os.SameFile(fi, before[cached]) {
			t.Errorf("%s is not a link of the cached rollout", rel)
		}
		return nil
	})
	for p, fi := range before {
		now, _ := os.Stat(p)
		if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
			t.Errorf("the cached %s was written", p)
		}
	}
	out, err := exec.Command(python, "-c", `
import json, sys
o = [json.loads(l)["ordinal"] for l in open(sys.argv[1])]
print(o == list(range(len(o))), len(o))
`, live).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "True") {
		t.Errorf("the live rollout's lines: %s %v", out, err)
	}
}
