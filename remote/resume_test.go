package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// The test binary is the far side's vigil when asked: `agent --stdio
// --store PATH` serves the store with the real Agent, so the link below
// is a real agent process per connection, as ssh would start.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_REMOTE_TEST_AGENT") == "1" {
		path := ""
		for i, a := range os.Args {
			if a == "--store" && i+1 < len(os.Args) {
				path = os.Args[i+1]
			}
		}
		opt := AgentOptions{Path: path, Vigil: "test",
			Open: func(p string, ro bool) (store.Source, error) { return store.Open(p, store.Options{ReadOnly: ro}) },
			Poll: 50 * time.Millisecond, Who: audit.Who{Name: "far-account@far"}, Channel: "vigil agent over ssh from 10.9.8.7 port 5555"}
		opt.DecideLock = os.Getenv("VIGIL_TEST_FAR_LOCK")
		if d, err := time.ParseDuration(os.Getenv("VIGIL_TEST_SLOW_DECIDE")); err == nil {
			open := opt.Open
			opt.Open = func(p string, ro bool) (store.Source, error) {
				src, err := open(p, ro)
				return slowDecide{Source: src, by: d}, err
			}
		}
		if p := os.Getenv("VIGIL_TEST_FAR_AUDIT"); p != "" {
			l, err := audit.Open(p)
			if err != nil {
				os.Exit(1)
			}
			opt.Audit = l
		}
		err := Agent(context.Background(), os.Stdin, os.Stdout, opt)
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testkit.Main(m))
}

// realAgent is a far-side vigil that is this test binary's Agent. It
// does not start while the file hold exists (the far machine is away).
func realAgent(t *testing.T, hold string) string {
	return script(t, `while [ -e '`+hold+`' ]; do sleep 0.02; done
VIGIL_REMOTE_TEST_AGENT=1 exec '`+os.Args[0]+`' "$@"`)
}

type linkLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *linkLog) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *linkLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// dropAndWait kills the link's ssh, waits for the store to be offline,
// runs during, and waits for the link to be made again by itself.
func dropAndWait(t *testing.T, c *Client, hold string, during func()) {
	t.Helper()
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.conn.cmd.Process.Kill()
	c.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for c.Offline() == "" {
		if time.Now().After(deadline) {
			t.Fatal("never offline")
		}
		time.Sleep(10 * time.Millisecond)
	}
	during()
	os.Remove(hold)
	deadline = time.Now().Add(10 * time.Second)
	for c.Offline() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("not reconnected: %s", c.Offline())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The link drops; a step and a decision land while it is down; the link
// comes back to a new agent process, and the reader's old cursor resumes:
// the outage's step once, the decision, no Reset (no load of the store).
// Then the store is replaced during an outage: the same resume says
// Reset, with a note of why.
func TestReconnectResumesFromTheCursor(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := w.StartRun(ctx, "outlives the link", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
		t.Fatal(err)
	}
	w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "before the outage", Result: "ok", Tokens: 1})
	req, err := w.PutPending(ctx, run, 2, "write", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	decider, err := ioharness.Open(path) // someone on the far host decides while the link is down
	if err != nil {
		t.Fatal(err)
	}

	var log linkLog
	hold := filepath.Join(t.TempDir(), "hold")
	c, err := Dial(ctx, Target{Host: "far", Path: path}, Options{SSH: fakeSSH(t), RemoteVigil: realAgent(t, hold),
		BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Log: log.add})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if h := c.Hello(); h.Proto != Proto {
		t.Fatalf("the link speaks protocol %d", h.Proto)
	}
	src := c.Source()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.(cursor).w.Token) == 0 {
		t.Fatal("an io-harness cursor over protocol 2 carries no token")
	}
	first := c.Hello().Instance

	dropAndWait(t, c, hold, func() {
		if _, err := decider.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: req}, Verdict: store.VerdictApprove}); err != nil {
			t.Fatal(err)
		}
		if err := decider.Close(); err != nil {
			t.Fatal(err)
		}
		w.CheckpointStep(ctx, run, harness.StepRecord{Step: 2, Decision: "while the link was down", Result: "ok", Tokens: 1})
	})
	if c.Hello().Instance == first {
		t.Fatal("the same agent after a reconnect")
	}
	var steps []string
	var decided bool
	for {
		ch, next, err := src.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Reset {
			t.Fatalf("Reset after the reconnect (the store would be loaded again); log:\n%s", &log)
		}
		for _, s := range ch.Steps {
			steps = append(steps, s.Decision)
		}
		for _, r := range ch.Requests {
			decided = decided || r.Resolved
		}
		cur = next
		if !ch.More {
			break
		}
	}
	if strings.Join(steps, "|") != "while the link was down" {
		t.Errorf("steps after resuming: %q; want the outage's step once", steps)
	}
	if !decided {
		t.Error("the decision made during the outage did not come")
	}
	if st := c.Stats(); st.Resumed != 1 || st.Reloaded != 0 {
		t.Errorf("stats %+v; want one resume, no reload", st)
	}
	if !strings.Contains(log.String(), "resumed from the cursor") {
		t.Errorf("the resume is not in the link's log:\n%s", &log)
	}
	// Nothing more, and nothing again.
	if ch, _, err := src.Changes(ctx, cur); err != nil || !ch.Empty() {
		t.Errorf("a second refresh: %+v %v", ch, err)
	}

	// Another store put at the path while the link is down.
	dropAndWait(t, c, hold, func() {
		other := filepath.Join(filepath.Dir(path), "other.sqlite3")
		w2, err := harness.Create(other)
		if err != nil {
			t.Fatal(err)
		}
		r2, _ := w2.StartRun(ctx, "another store", "/w")
		w2.CheckpointStep(ctx, r2, harness.StepRecord{Step: 1, Decision: "x", Result: "ok", Tokens: 1})
		w2.CheckpointStep(ctx, r2, harness.StepRecord{Step: 2, Decision: "y", Result: "ok", Tokens: 1})
		w2.CheckpointStep(ctx, r2, harness.StepRecord{Step: 3, Decision: "z", Result: "ok", Tokens: 1})
		w2.Close()
		// The harness stopped and its store put away with its WAL, as
		// a store is replaced.
		w.Close()
		if err := os.Rename(other, path); err != nil {
			t.Fatal(err)
		}
	})
	ch, _, err := src.Changes(ctx, cur)
	if err != nil || !ch.Reset {
		t.Fatalf("a cursor of the replaced store: %+v %v; want Reset", ch, err)
	}
	if st := c.Stats(); st.Reloaded != 1 {
		t.Errorf("stats %+v; want one reload", st)
	}
	if !strings.Contains(log.String(), "loading the store again: the store at "+path+" is not the one the cursor was made on") {
		t.Errorf("the reload is not said:\n%s", &log)
	}
}

// countingSource counts whole loads (Runs, Requests) of a store.
type countingSource struct {
	store.Source
	mu    sync.Mutex
	loads int
}

func (s *countingSource) Runs(ctx context.Context) ([]store.Run, error) {
	s.mu.Lock()
	s.loads++
	s.mu.Unlock()
	return s.Source.Runs(ctx)
}

func (s *countingSource) Requests(ctx context.Context, unresolved bool, runs ...string) ([]store.Request, error) {
	s.mu.Lock()
	s.loads++
	s.mu.Unlock()
	return s.Source.Requests(ctx, unresolved, runs...)
}

func (s *countingSource) Loads() int { s.mu.Lock(); defer s.mu.Unlock(); return s.loads }
