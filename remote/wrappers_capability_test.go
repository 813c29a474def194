package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/serve"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/claudecode" // the agent CLIs' formats, registered for store.Open
	_ "github.com/vigil-run/vigil/store/codex"
	_ "github.com/vigil-run/vigil/store/geminicli"
	_ "github.com/vigil-run/vigil/store/opencode"
	"github.com/vigil-run/vigil/store/union"
)

// Every wrapper of a store — several stores read as one (union), a vigil
// serve session's view, an ssh:// link to a far agent — offers what the
// store inside it offers, and answers each capability as the store does.
// The store is each format's: io-harness, Starweaver, Leviath.
func TestWrappersOfferWhatTheSourceInsideOffers(t *testing.T) {
	ctx := context.Background()
	formats := []struct {
		name  string
		build func(t *testing.T, dir string) string
	}{
		{"io-harness", func(t *testing.T, dir string) string {
			p, err := fixture.Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"starweaver", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "starweaver.sqlite")
			sw := newSWStore(t, path, "run_11111111-2222-4333-8444-555566667777", "wrapped")
			sw.addTurn(1, "first")
			sw.addTurn(2, "second")
			sw.addTurn(3, "third")
			sw.ask()
			sw.db.Close()
			return path
		}},
		{"leviath", func(t *testing.T, dir string) string {
			runs := filepath.Join(dir, "runs")
			r := newLevRun(t, runs, "lev-wrapped", "wrapped")
			r.turn("first")
			r.turn("second")
			r.turn("third")
			return runs
		}},
		// The agent CLIs' stores, as each CLI wrote them here.
		{"claude-code", func(t *testing.T, dir string) string {
			src := testkit.Fixtures(t, "agents/claude-code/transcript")
			cfg := filepath.Join(dir, ".claude")
			testkit.CopyFile(t, filepath.Join(src, "main-session.jsonl"), filepath.Join(cfg, "projects", "-w", "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b.jsonl"))
			return cfg
		}},
		{"codex", func(t *testing.T, dir string) string {
			src := testkit.Fixtures(t, "agents/codex/rollout")
			sessions := filepath.Join(dir, "sessions")
			testkit.CopyFile(t, filepath.Join(src, "steps3-rollout-2026-12-04T18-35-49-01a24257-53d0-7901-84c8-7a183281d969.jsonl"),
				filepath.Join(sessions, "2026", "12", "04", "rollout-2026-12-04T18-35-49-01a24257-53d0-7901-84c8-7a183281d969.jsonl"))
			return sessions
		}},
		{"gemini-cli", func(t *testing.T, dir string) string {
			src := testkit.Fixtures(t, "agents/gemini-cli/chats")
			chats := filepath.Join(dir, "tmp", "w", "chats")
			testkit.CopyFile(t, filepath.Join(src, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl"), filepath.Join(chats, "session-2026-12-04T18-39-52f24ebd.jsonl"))
			return chats
		}},
		{"opencode", func(t *testing.T, dir string) string {
			// The db-export of a real opencode run, loaded into the schema
			// opencode 1.18.33 created, by a foreign writer (Python's sqlite3).
			export := filepath.Join(testkit.Fixtures(t, "agents/opencode"), "db-export", "subagent-run.jsonl")
			py := testkit.Tool(t, "python3", "opencode's database is written by Python's sqlite3 here")
			db := filepath.Join(dir, "opencode.db")
			out, err := exec.Command(py, "../store/opencode/testdata/writer.py", db, "load", "../store/opencode/testdata/schema-1.18.33.sql", export).CombinedOutput()
			if err != nil {
				t.Fatalf("loading the export: %v\n%s", err, out)
			}
			return db
		}},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			path := f.build(t, dir)
			open := func() (store.Source, error) { return store.Open(path, store.Options{ReadOnly: true}) }
			inner, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			if inner.Format() != f.name {
				t.Fatalf("the store opened as %s", inner.Format())
			}
			want := observe(ctx, t, inner, inner, "")

			// Two handles on the same store, as one set.
			second, err := open()
			if err != nil {
				t.Fatal(err)
			}
			set, err := union.New([]union.Member{{Name: path, Source: inner}, {Name: path, Source: second}})
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			u := set.Source()
			prefix := set.Stores()[0].Prefix
			same(t, "union", u.Capabilities(), inner.Capabilities(), observe(ctx, t, inner, u, prefix), want, "RecentRuns", "Problems", "ReadingNote")

			hub, err := serve.NewHub(open, serve.HubOptions{Poll: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer hub.Close()
			// A view's cursors are the hub's: no codec (serve.ViewLacks), and
			// its first cursor already follows every run (whole).
			v := hub.View(serve.Session{Role: serve.Viewer}, "")
			same(t, "serve's view", v.Capabilities(), inner.Capabilities()&^serve.ViewLacks, observe(ctx, t, inner, v, ""), want, "EncodeCursor", "HeadNewest")

			c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, filepath.Join(dir, "no-hold"))})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			same(t, "remote", c.Source().Capabilities(), inner.Capabilities(), observe(ctx, t, inner, c.Source(), ""), want)
		})
	}
}

func same(t *testing.T, wrapper string, caps, wantCaps store.Capabilities, got, want map[string]string, skip ...string) {
	t.Helper()
	if caps != wantCaps {
		t.Errorf("%s offers %s; the store inside offers %s", wrapper, caps, wantCaps)
	}
	for k, w := range want {
		if strings.Contains(strings.Join(skip, " "), k) {
			continue
		}
		if got[k] != w {
			t.Errorf("%s: %s answers\n\t%s\nthe store inside answers\n\t%s", wrapper, k, got[k], w)
		}
	}
}

// observe asks src each capability of the store.Source contract about a
// run and a request of inner (with ids of the set prefixed, when prefix is
// a union's): one line per call, its answer as JSON or the kind of its
// error, the prefix taken off again.
func observe(ctx context.Context, t *testing.T, inner, src store.Source, prefix string) map[string]string {
	t.Helper()
	in := func(id string) string {
		if prefix == "" {
			return id
		}
		return prefix + "/" + id
	}
	runs, err := inner.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := ""
	var steps []store.Step
	for _, r := range runs {
		if st, _ := inner.Steps(ctx, r.ID); len(st) >= 2 {
			run, steps = r.ID, st
			break
		}
	}
	if run == "" {
		t.Fatal("the store has no run of two steps")
	}
	out := map[string]string{}
	say := func(call string, v any, err error) {
		s := ""
		switch {
		case errors.Is(err, store.ErrUnsupported):
			s = "unsupported"
		case errors.Is(err, store.ErrNoSuchRun):
			s = "no such run"
		case err != nil:
			s = "error"
		default:
			b, jerr := json.Marshal(v)
			if jerr != nil {
				t.Fatal(jerr)
			}
			s = string(b)
		}
		if prefix != "" {
			s = strings.ReplaceAll(s, `"`+prefix+`/`, `"`)
		}
		out[call] = s
	}

	r, err := src.Run(ctx, in(run))
	say("Run", r, err)
	_, err = src.Run(ctx, in("no-such-run"))
	say("Run(no such)", nil, err)
	has, err := src.HasRun(ctx, in(run))
	say("HasRun", has, err)
	page, all, err := src.RecentRuns(ctx, 2)
	say("RecentRuns", []any{page, all}, err)
	var rows []store.StepRow
	err = src.EachStepRow(ctx, in(run), steps[1].RowID, 0, func(p []store.StepRow) error { rows = append(rows, p...); return nil })
	say("EachStepRow", rows, err)
	calls, err := src.ProviderCallsFor(ctx, in(run), steps[0].Number, steps[1].Number)
	say("ProviderCallsFor", calls, err)
	ds, err := src.StepDetails(ctx, in(run))
	say("StepDetails", ds, err)
	field := "result"
	if d, err := inner.StepDetail(ctx, run, steps[0].RowID); err == nil && len(d.Truncated) > 0 {
		field = d.Truncated[0]
	}
	var b bytes.Buffer
	err = src.WriteStepField(ctx, in(run), steps[0].RowID, field, &b)
	say("WriteStepField", b.String(), err)
	facts, err := src.RunFacts(ctx, in(run))
	say("RunFacts", facts, err)
	evs, err := src.PolicyEvents(ctx, in(run))
	say("PolicyEvents", evs, err)
	lw, err := src.LastWrite(ctx)
	say("LastWrite", lw, err)
	reqs, err := inner.Requests(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) > 0 {
		k := reqs[0].Key()
		q, err := src.Request(ctx, store.RequestKey{Kind: k.Kind, ID: in(k.ID)})
		say("Request", q, err)
		evs, err := src.PolicyEvents(ctx, in(reqs[0].RunID))
		say("PolicyEvents(the request's run)", evs, err)
	}
	var reasons []string
	for _, k := range reasonKinds {
		for _, v := range reasonVerdicts {
			if src.CarriesReason(k, v) {
				reasons = append(reasons, reasonKey(k, v))
			}
		}
	}
	say("CarriesReason", reasons, nil)
	say("Problems", fmt.Sprint(len(src.Problems())), nil)
	say("ReadingNote", src.ReadingNote(), nil)
	b.Reset()
	err = src.WriteCanonicalTrace(ctx, in(run), &b)
	say("WriteCanonicalTrace", b.String(), err)
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.EncodeCursor(cur)
	say("EncodeCursor", nil, err)
	// A first cursor for a page of one run, made whole, is followed.
	cur, whole, err := src.HeadNewest(ctx, 1)
	if err == nil {
		cur, err = src.WholeHead(ctx, cur)
	}
	var ch *store.Changes
	if err == nil {
		ch, _, err = src.Changes(ctx, cur)
	}
	say("HeadNewest", []any{whole, ch != nil && ch.Reset}, err)
	return out
}
