package leviath

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/vigil-run/vigil/remote"
	"github.com/vigil-run/vigil/store"
)

// agentLink speaks vigil agent's JSON lines to an agent serving src in
// this process, as the ssh:// client does over the link.
type agentLink struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
	id  int64
}

func startAgent(t *testing.T, src store.Source) *agentLink {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		remote.Agent(ctx, inR, outW, remote.AgentOptions{Path: src.Path(), ReadOnly: true, Vigil: "test", Poll: 20 * time.Millisecond,
			Open: func(string, bool) (store.Source, error) { return src, nil }})
		outW.Close()
	}()
	l := &agentLink{t: t, in: inW, out: bufio.NewReader(outR)}
	t.Cleanup(func() { inW.Close(); cancel(); go io.Copy(io.Discard, l.out); <-done })
	var hello struct {
		Hello *remote.Hello `json:"hello"`
	}
	if line, err := l.out.ReadBytes('\n'); err != nil || json.Unmarshal(line, &hello) != nil || hello.Hello == nil || !hello.Hello.RecentRuns {
		t.Fatalf("hello %q %v", line, err)
	}
	return l
}

// agentCursor is a cursor as vigil agent's protocol carries it.
type agentCursor struct {
	Instance string          `json:"instance"`
	Token    json.RawMessage `json:"token"`
}

// head asks the agent for the store's Head.
func (l *agentLink) head() agentCursor {
	l.t.Helper()
	var cur agentCursor
	l.call(2*time.Second, "Head", nil, &cur)
	return cur
}

// recentPage is RecentRuns' answer: the newest runs, and whether that is all.
type recentPage struct {
	Runs []store.Run `json:"runs"`
	All  bool        `json:"all"`
}

// recentRuns asks for the newest runs, as a client's first screen does.
func (l *agentLink) recentRuns() recentPage {
	l.t.Helper()
	var page recentPage
	l.call(2*time.Second, "RecentRuns", map[string]int{"limit": 256}, &page)
	return page
}

// agentChanges is Changes' answer: what changed after a cursor, and the
// cursor to ask after next.
type agentChanges struct {
	Changes *store.Changes `json:"changes"`
	Next    agentCursor    `json:"next"`
}

// changes asks for what changed after cur.
func (l *agentLink) changes(cur agentCursor) agentChanges {
	l.t.Helper()
	var page agentChanges
	l.call(10*time.Second, "Changes", cur, &page)
	return page
}

// call sends one request and waits, at most within, for its answer.
func (l *agentLink) call(within time.Duration, method string, params, result any) {
	l.t.Helper()
	l.id++
	p, _ := json.Marshal(params)
	req, _ := json.Marshal(map[string]any{"id": l.id, "method": method, "params": json.RawMessage(p)})
	got := make(chan []byte, 1)
	go func(id int64) {
		for {
			line, err := l.out.ReadBytes('\n')
			if err != nil {
				got <- nil
				return
			}
			var r struct {
				ID int64 `json:"id"`
			}
			if json.Unmarshal(line, &r) == nil && r.ID == id {
				got <- line
				return
			}
		}
	}(l.id)
	if _, err := l.in.Write(append(req, '\n')); err != nil {
		l.t.Fatal(err)
	}
	select {
	case line := <-got:
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if line == nil || json.Unmarshal(line, &r) != nil || r.Error != nil {
			l.t.Fatalf("%s: %s", method, line)
		}
		if err := json.Unmarshal(r.Result, result); err != nil {
			l.t.Fatalf("%s: %v in %s", method, err, line)
		}
	case <-time.After(within):
		l.t.Fatalf("%s: no answer within %v (waiting for the background fold?)", method, within)
	}
}

// A remote reader's first screen over a Leviath runs directory whose
// journals are still being folded is read at once, as a local one's is:
// the cursor, the newest runs (not all counted yet), the open prompts and
// the last write answer while the fold is held. Once it is in place, the
// changes after that cursor give every row the folded journals hold, as
// no write (Unwritten); a frame appended after is a write.
func TestAgentFirstScreenDoesNotWaitForTheFold(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	wantSteps := map[string]int{}
	for _, id := range []string{idRoot, idChangelog} {
		st, err := want.Steps(bg, id)
		if err != nil || len(st) == 0 {
			t.Fatal(id, len(st), err)
		}
		wantSteps[id] = len(st)
	}

	s, release := openDeferred(t, fx.runs)
	l := startAgent(t, store.Complete(s))
	t.Cleanup(release) // before the agent is waited for: a call stuck in the fold ends
	cur := l.head()
	recent := l.recentRuns()
	if recent.All || len(recent.Runs) == 0 {
		t.Fatalf("before the fold: %d runs, all %v", len(recent.Runs), recent.All)
	}
	for _, r := range recent.Runs {
		if r.ID == idRoot && (r.StatsKnown || r.Summary != nil) {
			t.Fatalf("a run not folded yet comes counted: %+v", r)
		}
	}
	var reqs []store.Request
	l.call(2*time.Second, "Requests", map[string]any{"unresolved": true}, &reqs)
	var last time.Time
	l.call(2*time.Second, "LastWrite", nil, &last)

	release()
	got := map[string]int{}
	deadline := time.Now().Add(10 * time.Second)
	for got[idRoot] < wantSteps[idRoot] || got[idChangelog] < wantSteps[idChangelog] {
		if time.Now().After(deadline) {
			t.Fatalf("after the fold, Changes gave %v of %v rows", got, wantSteps)
		}
		res := l.changes(cur)
		if res.Changes.Reset {
			t.Fatalf("Reset after the fold: %+v", res)
		}
		for _, r := range res.Changes.Steps {
			got[r.RunID]++
		}
		if !res.Changes.Empty() && !res.Changes.Unwritten {
			t.Fatalf("the folds put in place come as a write (the reader's \"updated\" would move): %d runs, %d rows", len(res.Changes.Runs), len(res.Changes.Steps))
		}
		cur = res.Next
		time.Sleep(20 * time.Millisecond)
	}
	if got[idRoot] != wantSteps[idRoot] {
		t.Fatalf("rows of %s: %d, the folded journal has %d", idRoot, got[idRoot], wantSteps[idRoot])
	}
	// A frame the daemon appends is a write.
	g := fx.gens[idRoot]
	g.meta.iteration, g.meta.prompt, g.meta.completion = 4, 5000, 260
	g.progress(t0+60, g.appendD("conversation", turnE("Publishing now.")))
	for deadline := time.Now().Add(10 * time.Second); ; {
		res := l.changes(cur)
		cur = res.Next
		if len(res.Changes.Steps) > 0 {
			if res.Changes.Unwritten {
				t.Fatal("an appended frame came as no write")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the appended frame never came")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
