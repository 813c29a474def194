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

// run reads a transcript's first and last 16 KiB, and reads 64 KiB of each
// only when those do not hold the first prompt or the last turn's start:
// what it says of a session is what folding the whole transcript says,
// whether the prompt sits behind a long first line or the last turn
// began long before the end.
func TestRunReadsLittleAndSaysWhatTheWholeSays(t *testing.T) {
	cfg, sid := fixtureStore(t)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	body, err := os.ReadFile(file)
	must(t, err)
	pad := strings.Repeat("x", 20<<10)
	longFirst := `{"type":"summary","summary":"` + pad + `","sessionId":"` + sid + `"}` + "\n" + string(body)
	longResult := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"` + pad + `"}]}}` + "\n"
	cases := map[string]string{
		"as recorded":                   string(body),
		"prompt behind a long line":     longFirst,
		"last turn long before the end": string(body) + toolTurn + longResult,
		"its call still running":        string(body) + toolTurn + strings.Repeat(`{"type":"attachment","attachment":{"note":"`+pad[:4<<10]+`"}}`+"\n", 6),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			writeFile(t, file, text)
			c, err := Open(cfg, store.Options{})
			must(t, err)
			s := c.(*Store)
			e, err := s.find(sid)
			must(t, err)
			got := s.run(e, nil)

			want := store.Run{}
			runHead(&want, []byte(text))
			stop, atRest := "", false
			f := fold{keep: 256}
			for _, l := range completeLines([]byte(text)) {
				f.feed(l, func(t *turn) { stop, atRest = t.stop, !t.running() && t.stop != "tool_use" })
			}
			if f.open != nil {
				stop, atRest = f.open.stop, false
			}
			if got.Goal != want.Goal || !got.StartedAt.Equal(want.StartedAt) || got.Workspace != want.Workspace || got.TurnKind != stop {
				t.Fatalf("run says goal %q start %v cwd %q turn %q; the whole says %q %v %q %q",
					got.Goal, got.StartedAt, got.Workspace, got.TurnKind, want.Goal, want.StartedAt, want.Workspace, stop)
			}
			if wantDone := atRest; (got.Status == store.StatusCompleted) != wantDone {
				t.Fatalf("status %v; the whole says at rest: %v", got.Status, atRest)
			}
		})
	}
}
