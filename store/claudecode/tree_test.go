package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Once a watcher keeps the tree (Touched), a line appended to one session
// of a history is found by statting the file the event named, not the
// whole history: a read before the event is told about it still sees the
// tree as last looked at, and the one after sees the line. Version, the
// safety tick's look at everything, finds it too.
func TestWatchedTreeLooksAtWhatEventsNamed(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	spec := src.Watch()
	if spec.Touched == nil {
		t.Fatal("the store gives its watcher no Touched")
	}
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	before, err := spec.Touched(nil)
	must(t, err)
	cur, err := src.Head(ctx)
	must(t, err)

	appendTo(t, file, toolTurn)
	if v, _ := spec.Touched(nil); v != before {
		t.Fatal("Touched told of nothing looked at the files anyway")
	}
	ch, _, err := src.Changes(ctx, cur)
	must(t, err)
	if len(ch.Steps) != 0 {
		t.Fatalf("a watched store read a file no event named yet: %+v", ch.Steps)
	}
	named, err := spec.Touched([]string{file})
	must(t, err)
	if named == before {
		t.Fatal("Touched told of the session's file did not see it grow")
	}
	ch, _, err = src.Changes(ctx, cur)
	must(t, err)
	if len(ch.Steps) != 1 || ch.Steps[0].ToolCall != `Bash {"command":"ls"}` {
		t.Fatalf("the line an event named: %+v", ch.Steps)
	}

	appendTo(t, file, toolResult)
	whole, err := spec.Version()
	must(t, err)
	if whole == named {
		t.Fatal("Version did not see the session's file grow")
	}
}

// A watched tree learns of a new project directory and its session from
// the event naming the directory, and of a sub-agent spawned three levels
// down (no event reaches that deep) from Version.
func TestWatchedTreeFindsNewSessionsAndSubAgents(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	spec := src.Watch()
	_, err := spec.Touched(nil)
	must(t, err)
	cur, err := src.Head(ctx)
	must(t, err)

	proj := filepath.Join(cfg, "projects", "-home-dev-work-other")
	must(t, os.Mkdir(proj, 0o755))
	const other = "0c0c0c0c-0000-4000-8000-000000000001"
	main, err := os.ReadFile(filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl"))
	must(t, err)
	writeFile(t, filepath.Join(proj, other+".jsonl"), strings.ReplaceAll(string(main), sid, other))
	_, err = spec.Touched([]string{proj})
	must(t, err)
	ch, cur, err := src.Changes(ctx, cur)
	must(t, err)
	if !hasRun(ch.Runs, other) {
		t.Fatalf("the new project's session is not among the changed runs: %+v", ch.Runs)
	}

	sub := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid, "subagents")
	time.Sleep(10 * time.Millisecond) // the directory's mtime must move
	writeFile(t, filepath.Join(sub, "agent-a000000000000002.jsonl"), `{"type":"user","sessionId":"`+sid+`","message":{"role":"user","content":"look around"}}`+"\n")
	if _, err := spec.Version(); err != nil {
		t.Fatal(err)
	}
	ch, _, err = src.Changes(ctx, cur)
	must(t, err)
	if !hasRun(ch.Runs, "agent-a000000000000002") {
		t.Fatalf("the new sub-agent is not among the changed runs: %+v", ch.Runs)
	}
}

func hasRun(runs []store.Run, id string) bool {
	for _, r := range runs {
		if r.ID == id {
			return true
		}
	}
	return false
}
