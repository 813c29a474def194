package starweaver

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/runmodel"
)

// bigCountScript is python3's sqlite3 as the foreign writer: it makes one
// model response of a finished run (the first of the runs it is given
// with a tool return too) too big for SQL (a 3 MB text part,
// with total_tokens 987654) and one tool return of it 2 MB, then decodes
// every record of the run whole with json.loads and prints the run's
// token total and highest step: what vigil must show once it knows.
const bigCountScript = `
import json, sqlite3, sys
path = sys.argv[1]
db = sqlite3.connect(path)
def payload(rec):
    return rec["payload"] if "schema" in rec or "version" in rec else rec
def kinds(run):
    return {payload(json.loads(raw))["event"]["kind"] for (raw,) in db.execute("SELECT record FROM stream_records WHERE run_id = ?", (run,))}
run = [r for r in sys.argv[2:] if {"model_response", "tool_return"} <= kinds(r)][0]
rows = db.execute("SELECT rowid, record FROM stream_records WHERE run_id = ? ORDER BY rowid", (run,)).fetchall()
done = set()
for rowid, raw in rows:
    rec = json.loads(raw)
    ev = payload(rec)["event"]
    if ev["kind"] == "model_response" and "response" not in done:
        ev["response"]["parts"][0]["text"] = "big turn " + "t" * (3 << 20)
        ev["response"]["usage"]["total_tokens"] = 987654
        provider = ev["response"]["provider"]["name"]
        done.add("response")
    elif ev["kind"] == "tool_return" and "return" not in done:
        ev["tool_return"]["content"] = "0123456789abcdef\n" * (2 << 20 // 17)
        done.add("return")
    else:
        continue
    db.execute("UPDATE stream_records SET record = ? WHERE rowid = ?", (json.dumps(rec), rowid))
db.commit()
assert done == {"response", "return"}, done
tokens = steps = 0
for (raw,) in db.execute("SELECT record FROM stream_records WHERE run_id = ?", (run,)):
    p = payload(json.loads(raw))
    src = p.get("source")
    if isinstance(src, dict) and src.get("run_id") != run:
        continue
    ev = p["event"]
    if ev["kind"] == "model_response":
        tokens += ev["response"].get("usage", {}).get("total_tokens", 0)
        steps = max(steps, ev["step"])
print(run, tokens, steps, provider)
`

// A run whose stream holds records too big for SQL: the run list (what
// the explorer's first frame reads: Head, Runs, Requests) reads none of
// them, and leaves the run's counts unknown rather than partial; counting
// it (RunStats, as the explorer does next and every command does at once)
// gives the total a whole decode of every record gives.
func TestBigRecordCountsWaitForRunStats(t *testing.T) {
	ctx := context.Background()
	path := buildV07(t, t.TempDir())
	var candidates []string
	{
		s, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Summary != nil && r.Tokens > 0 {
				candidates = append(candidates, r.ID)
			}
		}
		s.Close()
	}
	if len(candidates) == 0 {
		t.Fatal("the fixture has no finished run with tokens")
	}
	testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	out, err := exec.Command("python3", append([]string{"-c", bigCountScript, path}, candidates...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 4 {
		t.Fatalf("python3 printed %q", out)
	}
	run := f[0]
	wantTokens, _ := strconv.ParseInt(f[1], 10, 64)
	wantSteps, _ := strconv.Atoi(f[2])
	wantProvider := f[3]

	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Head(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Requests(ctx, true); err != nil {
		t.Fatal(err)
	}
	if n := s.bigReads.Load(); n != 0 {
		t.Errorf("the first frame's reads read %d big records", n)
	}
	found := false
	for _, r := range runs {
		if r.ID != run {
			continue
		}
		found = true
		if r.StatsKnown || r.Summary == nil || r.Summary.Tokens != 0 || r.Tokens != 0 {
			t.Errorf("before counting: known %v, tokens %d, summary %+v: want finished, counts unknown", r.StatsKnown, r.Tokens, r.Summary)
		}
	}
	if !found {
		t.Fatalf("run %s is not in the run list", run)
	}
	md, err := runmodel.Load(ctx, s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := md.Run(run)
	if !ok {
		t.Fatalf("run %s is not in the model", run)
	}
	if !r.StatsKnown || r.Tokens != wantTokens || r.Steps != wantSteps {
		t.Errorf("counted: known %v, %d tokens, %d steps; a whole decode gives %d tokens, %d steps", r.StatsKnown, r.Tokens, r.Steps, wantTokens, wantSteps)
	}
	if r.Provider != wantProvider {
		t.Errorf("provider %q, want %q", r.Provider, wantProvider)
	}
	st, err := s.RunStats(ctx, []string{run})
	if err != nil || st[run].Provider != wantProvider {
		t.Errorf("RunStats: %+v, %v; want provider %q", st[run], err, wantProvider)
	}
	if r.Summary == nil || r.Summary.Tokens != wantTokens || r.Summary.Steps != wantSteps {
		t.Errorf("summary after counting: %+v, want %d tokens, %d steps", r.Summary, wantTokens, wantSteps)
	}
	if s.bigReads.Load() == 0 {
		t.Error("the count read no big record: the test did not make one")
	}
	// The same figures as the count done before this stop (every record
	// read in Runs' own pass).
	groups, err := s.responseAggs(ctx, 1<<62, "")
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.attribute(ctx, groups)
	if err != nil {
		t.Fatal(err)
	}
	if a := all[run]; a.tokens != wantTokens || a.steps != wantSteps {
		t.Errorf("the whole pass: %d tokens, %d steps, want %d, %d", a.tokens, a.steps, wantTokens, wantSteps)
	}
}
