package remote

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/vigil-run/vigil/store/leviath" // the far side opens Leviath runs directories
)

// levRun is one Leviath run directory as Leviath's daemon writes it: a
// run.lvr journal ("LVR1", version 1, length-prefixed JSON records: a
// Header, a ContextCheckpoint, then a Progress per job appending to the
// conversation) and meta.json beside it.
type levRun struct {
	t       *testing.T
	dir, id string
	goal    string
	jobs    int
}

const levT0 = int64(1785427200)

func newLevRun(t *testing.T, runs, id, goal string) *levRun {
	t.Helper()
	r := &levRun{t: t, dir: filepath.Join(runs, id), id: id, goal: goal}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := []byte("LVR1\x00\x01")
	b = append(b, r.frame(map[string]any{"Header": map[string]any{
		"identity": map[string]any{"run_id": id, "machine_id": "5c1e0f9a7b3d2e48", "world_id": "a91f3c0de4b27766", "created_at": levT0},
		"meta":     r.meta(levT0)}})...)
	b = append(b, r.frame(map[string]any{"ContextCheckpoint": map[string]any{"at": levT0, "snapshot": map[string]any{
		"stage_name": "work", "total_tokens": 10, "max_tokens": 200000, "regions": []any{map[string]any{
			"name": "conversation", "kind": "sliding", "current_tokens": 10, "max_tokens": 10000,
			"entries": []any{levEntry("UserMessage", goal)}}}}}})...)
	r.write(b)
	return r
}

func levEntry(kind, text string) map[string]any {
	k := map[string]any{"type": kind}
	if kind == "AssistantTurn" {
		k["tool_calls"] = []any{}
	}
	return map[string]any{"content": text, "tokens": (len(text) + 3) / 4, "kind": k, "taint": "Internal"}
}

func (r *levRun) meta(at int64) map[string]any {
	return map[string]any{"run_id": r.id, "agent_name": "far", "task": r.goal, "model": "anthropic/claude-sonnet-4-5",
		"pid": 0, "status": "running", "current_stage": "work", "stage_index": 0, "num_stages": 1, "iteration": r.jobs,
		"prompt_tokens": 1000 * r.jobs, "completion_tokens": 0, "workdir": "/w", "started_at": levT0, "updated_at": at,
		"parent_run_id": nil, "children": []string{}, "depth": 0}
}

func (r *levRun) frame(rec any) []byte {
	b, err := json.Marshal(rec)
	if err != nil {
		r.t.Fatal(err)
	}
	out := binary.BigEndian.AppendUint64(nil, uint64(len(b)))
	return append(out, b...)
}

// write appends to run.lvr in one write, then replaces meta.json.
func (r *levRun) write(b []byte) {
	r.t.Helper()
	f, err := os.OpenFile(filepath.Join(r.dir, "run.lvr"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		r.t.Fatal(err)
	}
	f.Close()
	m, _ := json.Marshal(r.meta(levT0 + int64(r.jobs)))
	tmp := filepath.Join(r.dir, ".meta.json.tmp")
	if err := os.WriteFile(tmp, m, 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.dir, "meta.json")); err != nil {
		r.t.Fatal(err)
	}
}

// turn appends one job: an assistant turn added to the conversation.
func (r *levRun) turn(text string) {
	r.jobs++
	at := levT0 + int64(r.jobs)
	r.write(r.frame(map[string]any{"Progress": map[string]any{"meta": r.meta(at), "at": at, "delta": map[string]any{
		"stage_name": "work", "total_tokens": 10 + 5*r.jobs, "max_tokens": 200000, "regions": []any{map[string]any{
			"Append": map[string]any{"name": "conversation", "entries": []any{levEntry("AssistantTurn", text)}, "current_tokens": 10 + 5*r.jobs}}}}}}))
}

// The same as TestReconnectResumesAStarweaverStore, on a Leviath runs
// directory the daemon writes while the link is down: the reader's token
// (marks in the journal's own terms) resumes on the new agent, a new
// process that numbers the journal the same: the outage's turns once, no
// Reset; a journal written over in place during the next outage says
// Reset, and why.
func TestReconnectResumesALeviathStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	lr := newLevRun(t, runs, "far-1785427200-0123456789ab", "outlives the link")
	lr.turn("before the outage")

	var log linkLog
	hold := filepath.Join(dir, "hold")
	c, err := Dial(ctx, Target{Host: "far", Path: runs}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, hold),
		BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Log: log.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if f := c.Hello().Format; f != "leviath" {
		t.Fatalf("the far store is %q", f)
	}
	src := c.Source()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.(cursor).w.Token) == 0 {
		t.Fatal("a Leviath cursor over protocol 2 carries no token")
	}
	steps, err := src.Steps(ctx, lr.id)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps before the outage: %+v %v", steps, err)
	}
	first := c.Hello().Instance

	dropAndWait(t, c, hold, func() {
		lr.turn("while the link was down")
		lr.turn("and once more")
	})
	if c.Hello().Instance == first {
		t.Fatal("the same agent after a reconnect")
	}
	var got []string
	seen := map[int64]bool{}
	for _, s := range steps {
		seen[s.RowID] = true
	}
	for {
		ch, next, err := src.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Reset {
			t.Fatalf("Reset after the reconnect (the store would be loaded again); log:\n%s", &log)
		}
		for _, s := range ch.Steps {
			if seen[s.RowID] {
				t.Errorf("row %d (%s) again", s.RowID, s.Decision)
			}
			seen[s.RowID] = true
			got = append(got, s.Decision)
		}
		cur = next
		if !ch.More {
			break
		}
	}
	if strings.Join(got, "|") != "assistant: while the link was down|assistant: and once more" {
		t.Errorf("steps after resuming: %q; want the outage's two turns once", got)
	}
	if st := c.Stats(); st.Resumed != 1 || st.Reloaded != 0 {
		t.Errorf("stats %+v; want one resume, no reload; log:\n%s", st, &log)
	}
	if ch, _, err := src.Changes(ctx, cur); err != nil || !ch.Empty() {
		t.Errorf("a second refresh: %+v %v", ch, err)
	}
	// The rows the new agent numbered are the rows the reader holds.
	after, err := src.Steps(ctx, lr.id)
	if err != nil || len(after) != 4 || after[1].RowID != steps[1].RowID {
		t.Errorf("steps on the new agent: %+v %v (before: %+v)", after, err, steps)
	}

	// The journal written over in place (the same file, other bytes)
	// while the link is down.
	dropAndWait(t, c, hold, func() {
		p := filepath.Join(lr.dir, "run.lvr")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.Replace(string(b), "before the outage", "BEFORE THE OUTAGE", 1))
		if err := os.WriteFile(p, b, 0o600); err != nil { // O_TRUNC: same inode
			t.Fatal(err)
		}
	})
	ch, _, err := src.Changes(ctx, cur)
	if err != nil || !ch.Reset {
		t.Fatalf("a cursor over a journal written over: %+v %v; want Reset", ch, err)
	}
	if st := c.Stats(); st.Reloaded != 1 {
		t.Errorf("stats %+v; want one reload", st)
	}
	want := fmt.Sprintf("loading the store again: the store at %s is not the one the cursor was made on: the journal of run %s was written over", runs, lr.id)
	if !strings.Contains(log.String(), want) {
		t.Errorf("the reload is not said (want %q):\n%s", want, &log)
	}
}
