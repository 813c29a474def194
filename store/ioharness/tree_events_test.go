package ioharness

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// streamScript has python3's sqlite3 (a foreign writer) make a store of
// this package's schema holding one tree (run 1 and its children, every one
// running) and write run_events as io-harness's put_event does (serde's
// flat JSON, the tag in the kind column), batch after batch: each batch
// writes count events round-robin over runs lo..hi. A store that exists
// is written to, not made again.
const streamScript = `
import json, sqlite3, sys, os
path, schema, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
fresh = not os.path.exists(path)
db = sqlite3.connect(path)
if fresh:
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(open(schema).read())
    db.execute("INSERT INTO runs (id, goal, file, depth, status) VALUES (1, 'root', '/w', 0, 'running')")
    db.executemany("INSERT INTO runs (id, goal, file, parent_run_id, depth, status) VALUES (?, ?, '/w', 1, 1, 'running')",
        ((i, "agent %d" % i) for i in range(2, spec["runs"] + 1)))
fields = {"started": {"provider": "p"}, "token": {"text": "chunk "}, "tool_call": {"name": "run", "target": "cargo build"}}
def rows():
    for b in spec["batches"]:
        lo, hi = b["runs"]
        for k in range(b["count"]):
            run = lo + k % (hi - lo + 1)
            obj = {"run_id": run, "step": 1, "depth": 1, "event": b["event"]}
            obj.update(fields[b["event"]])
            yield (run, 1, 1, b["event"], json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
db.executemany("INSERT INTO run_events (run_id, step, depth, kind, json) VALUES (?, ?, ?, ?, ?)", rows())
db.commit()
print(db.execute("SELECT COALESCE(MAX(id), 0) FROM run_events").fetchone()[0])
`

type batch struct {
	Runs  [2]int `json:"runs"`
	Count int    `json:"count"`
	Event string `json:"event"`
}

// writeStream runs streamScript; it returns the stream's newest event id.
func writeStream(t testing.TB, path string, runs int, batches ...batch) int64 {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	spec, _ := json.Marshal(map[string]any{"runs": runs, "batches": batches})
	out, err := exec.Command("python3", "-c", streamScript, path, filepath.Join("internal", "schema", "schema.sql"), string(spec)).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	n, err := strconv.ParseInt(string(out[:len(out)-1]), 10, 64)
	if err != nil {
		t.Fatalf("python3 printed %q", out)
	}
	return n
}

func treeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	return ids
}

// perAgent is the answer of a seek per run (runEvents): the oracle.
func perAgent(t *testing.T, s *Store, ids []string, after int64, n int) []store.RunEvent {
	t.Helper()
	var out []store.RunEvent
	for _, id := range ids {
		evs, err := s.runEvents(context.Background(), runNum(id), after, math.MaxInt64, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
	}
	byID(out)
	return out
}

func byID(evs []store.RunEvent) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].ID < evs[j-1].ID; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

func ofRun(evs []store.RunEvent, id string) []store.RunEvent {
	var out []store.RunEvent
	for _, e := range evs {
		if e.RunID == id {
			out = append(out, e)
		}
	}
	return out
}

// In a tree of more than manyIDs agents, an agent that went quiet (a long
// tool call) while the others streamed far more than a page of events
// since still has its newest events read on the tree's first read, exactly
// those the per-agent path reads; and a refresh after a cursor that many
// events back loses none of them.
func TestBigTreeEventsExact(t *testing.T) {
	const agents = manyIDs + 200
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	writeStream(t, path, agents,
		batch{Runs: [2]int{5, 5}, Count: 1, Event: "started"},
		batch{Runs: [2]int{5, 5}, Count: 1, Event: "tool_call"}, // #5 runs cargo build from here on
		batch{Runs: [2]int{7, 7}, Count: 100, Event: "token"},   // more than PerRun
		batch{Runs: [2]int{10, 60}, Count: eventPage + 3000, Event: "token"},
		batch{Runs: [2]int{agents, agents}, Count: 3, Event: "token"},
	)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ids := treeIDs(agents)
	a, err := s.Activity(ctx, store.ActivityQuery{RunIDs: ids, PerRun: 64})
	if err != nil {
		t.Fatal(err)
	}
	five := ofRun(a.Events, "5")
	if len(five) != 2 || five[1].Kind != store.LiveTool || five[1].Text != "run cargo build" {
		t.Fatalf("the quiet agent's events: %+v", five)
	}
	if n := len(ofRun(a.Events, "7")); n != 64 {
		t.Errorf("agent 7: %d events, want its newest 64", n)
	}
	if want := perAgent(t, s, ids, 0, 64); !reflect.DeepEqual(a.Events, want) {
		t.Fatalf("first read: %d events, the per-agent path %d", len(a.Events), len(want))
	}
	if a.Through != int64(2+100+eventPage+3000+3) {
		t.Errorf("through %d", a.Through)
	}

	// Past the cursor: one event of a quiet agent first, then more than a
	// page of the busy ones, the quiet one's again in the middle.
	cursor := a.Through
	newest := writeStream(t, path, agents,
		batch{Runs: [2]int{6, 6}, Count: 1, Event: "tool_call"},
		batch{Runs: [2]int{10, 60}, Count: eventPage + 500, Event: "token"},
		batch{Runs: [2]int{5, 5}, Count: 1, Event: "token"},
		batch{Runs: [2]int{10, 60}, Count: eventPage + 500, Event: "token"},
	)
	b, err := s.Activity(ctx, store.ActivityQuery{RunIDs: ids, After: cursor, PerRun: 64})
	if err != nil {
		t.Fatal(err)
	}
	if six := ofRun(b.Events, "6"); len(six) != 1 || six[0].ID != cursor+1 {
		t.Fatalf("the event just past the cursor: %+v", six)
	}
	if len(ofRun(b.Events, "5")) != 1 {
		t.Errorf("agent 5's new event is lost")
	}
	if want := perAgent(t, s, ids, cursor, 64); !reflect.DeepEqual(b.Events, want) {
		t.Fatalf("refresh: %d events, the per-agent path %d", len(b.Events), len(want))
	}
	if b.Through != newest {
		t.Errorf("through %d, the stream ends at %d", b.Through, newest)
	}
	// Nothing new: nothing read.
	c, err := s.Activity(ctx, store.ActivityQuery{RunIDs: ids, After: b.Through, PerRun: 64})
	if err != nil || len(c.Events) != 0 || c.Through != newest {
		t.Fatalf("nothing new: %d events, through %d, %v", len(c.Events), c.Through, err)
	}
	// A tree of a few agents (refreshes seek each one too): the same
	// answers.
	few := ids[:manyIDs]
	for _, after := range []int64{0, cursor, newest - 500} { // the last: fewer events than agents, read as a range
		d, err := s.Activity(ctx, store.ActivityQuery{RunIDs: few, After: after, PerRun: 64})
		if err != nil {
			t.Fatal(err)
		}
		if want := perAgent(t, s, few, after, 64); !reflect.DeepEqual(d.Events, want) || d.Through != newest {
			t.Fatalf("a few agents after %d: %d events, want %d; through %d", after, len(d.Events), len(want), d.Through)
		}
	}
}

// bigStreamStore is a 100 k-agent tree whose stream holds a million
// events: most agents a few, a thousand of them busy, built once under the
// cache (VIGIL_BIG=1).
func bigStreamStore(b *testing.B) string {
	if os.Getenv("VIGIL_BIG") == "" {
		b.Skip("VIGIL_BIG=1 builds a 100 k-agent store")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "vigil-bigrun", "stream-100k", "runs.sqlite3")
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.Remove(path)
	writeStream(b, path, 100_000,
		batch{Runs: [2]int{2, 100_000}, Count: 500_000, Event: "token"},
		batch{Runs: [2]int{2, 1001}, Count: 500_000, Event: "token"},
	)
	os.WriteFile(path+".done", nil, 0o644)
	return path
}

// BenchmarkBigTreeFirstRead is the explorer's first read of a 100 k-agent
// tree's stream (VIGIL_BIG=1 go test -run X -bench BigTree ./store/ioharness/).
func BenchmarkBigTreeFirstRead(b *testing.B) {
	path := bigStreamStore(b)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := treeIDs(100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, err := s.Activity(context.Background(), store.ActivityQuery{RunIDs: ids, PerRun: 64})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(a.Events)), "events")
	}
}

// BenchmarkBigTreeRefresh reads the newest 20 000 events of the stream, as
// a refresh after a second of a busy tree does.
func BenchmarkBigTreeRefresh(b *testing.B) {
	path := bigStreamStore(b)
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ids := treeIDs(100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Activity(context.Background(), store.ActivityQuery{RunIDs: ids, After: 1_000_000 - 20_000, PerRun: 64}); err != nil {
			b.Fatal(err)
		}
	}
}
