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

// Changes compares only what the view's log says changed since the
// cursor's view; a cursor older than the log, or made by another store
// open on the same directory, is compared on every transcript, and nothing
// appended is missed either way.
func TestChangesFromAnOldOrAnotherStoresCursor(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	spec := src.Watch()
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	_, err := spec.Touched(nil)
	must(t, err)
	cur, err := src.Head(ctx)
	must(t, err)
	_, cur, err = src.Changes(ctx, cur) // a cursor with the view's gen
	must(t, err)

	other := open(t, cfg)
	appendTo(t, file, toolTurn)
	_, err = spec.Touched([]string{file})
	must(t, err)
	for name, s := range map[string]interface {
		Changes(context.Context, store.Cursor) (*store.Changes, store.Cursor, error)
	}{"this store": src, "another store": other} {
		ch, _, err := s.Changes(ctx, cur)
		must(t, err)
		if len(ch.Steps) != 1 {
			t.Fatalf("%s: the appended turn from the cursor: %+v", name, ch.Steps)
		}
	}

	// Past the log's bound: the session's change is no longer in it, the
	// cursor's gen is older than what it holds.
	sub := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid, "subagents", "agent-adacfd069ace754ac.jsonl")
	for i := 0; i < logMax+10; i++ {
		appendTo(t, sub, "\n")
		_, err = spec.Touched([]string{sub})
		must(t, err)
	}
	ch, _, err := src.Changes(ctx, cur)
	must(t, err)
	if len(ch.Steps) != 1 {
		t.Fatalf("a cursor older than the log: %+v", ch.Steps)
	}
}

// A count reads a line whose top-level type is neither assistant nor user
// without decoding it, and counts what a fold decoding every line counts:
// a progress line carrying a sub-agent's assistant message inside it is
// still not a turn of this transcript.
func TestCountsReadOtherLinesUndecodedAndCountTheSame(t *testing.T) {
	cfg, sid := fixtureStore(t)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	progress := `{"type":"progress","data":{"message":{"type":"assistant","message":{"id":"msg_sub","content":[{"type":"text","text":"inner"}],"usage":{"input_tokens":999,"output_tokens":1}}}}}` + "\n"
	appendTo(t, file, toolTurn+progress+toolResult+progress+strings.Replace(toolTurn, "msg_t1", "msg_t2", 1))
	src := open(t, cfg)
	got, err := src.RunStats(context.Background(), []string{sid})
	must(t, err)
	body, err := os.ReadFile(file)
	must(t, err)
	var want store.RunStats
	f := fold{keep: cursorKeep}
	for _, l := range completeLines(body) {
		f.feed(l, func(t *turn) {
			want.Steps, want.Through = t.number, t.commit
			if tot := t.usage.total(); tot != nil {
				want.Tokens += *tot
			}
		})
	}
	if f.open != nil {
		want.Steps = f.open.number
	}
	if got[sid] != want {
		t.Fatalf("counted %+v; a fold decoding every line counts %+v", got[sid], want)
	}
}

// The safety tick's whole look lists and stats without holding up a
// Touched: one made while it is under way returns at once, and what it saw
// (newer) is what the view keeps after the whole look publishes.
func TestTouchedDoesNotWaitForTheWholeLook(t *testing.T) {
	cfg, sid := fixtureStore(t)
	c, err := Open(cfg, store.Options{})
	must(t, err)
	s := c.(*Store)
	spec := s.Watch()
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")
	_, err = spec.Touched(nil)
	must(t, err)

	parked, release := make(chan struct{}), make(chan struct{})
	wholeLooked = func() { close(parked); <-release }
	defer func() { wholeLooked = nil }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		spec.Version()
	}()
	<-parked
	appendTo(t, file, toolTurn)
	touched := make(chan struct{})
	go func() {
		spec.Touched([]string{file})
		close(touched)
	}()
	select {
	case <-touched:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("Touched waited for the whole look")
	}
	close(release)
	<-done
	seen, _ := s.tree.current().files.get(file)
	if fi, err := os.Stat(file); err != nil || seen.size != fi.Size() {
		t.Fatalf("after the whole look the view holds size %d; the file is %d bytes", seen.size, fi.Size())
	}
}
