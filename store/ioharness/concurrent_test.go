package ioharness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// TestMain lets the test binary act as a second deciding process.
func TestMain(m *testing.M) {
	switch os.Getenv("VIGIL_STORE_CHILD") {
	case "decide":
		os.Exit(childDecide())
	case "create":
		os.Exit(childCreate())
	case "embed":
		os.Exit(childEmbed())
	}
	os.Exit(testkit.Main(m))
}

// childDecide decides every approval id in VIGIL_IDS, starting at
// VIGIL_START (unix nanos) so the processes collide, and prints the ones it won.
func childDecide() int {
	s, err := Open(os.Getenv("VIGIL_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	start, _ := strconv.ParseInt(os.Getenv("VIGIL_START"), 10, 64)
	time.Sleep(time.Until(time.Unix(0, start)))
	verdict := os.Getenv("VIGIL_VERDICT")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i, id := range strings.Fields(os.Getenv("VIGIL_IDS")) {
		lockstep(start, i)
		r, err := s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.Verdict(verdict)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if r.Won {
			fmt.Fprintf(out, "won %s %s\n", id, verdict)
		} else if r.Decision == "" {
			fmt.Fprintf(os.Stderr, "lost %s without a winning decision\n", id)
			return 1
		}
	}
	return 0
}

// liveRun makes a store with a tree this process drives (so decisions are
// deliverable) and n pending approvals in it, one per agent: a driver polls
// one request per run at a time (race_gate, src/run/step.rs), so n requests
// all open at once are n agents' of one tree, leased at its root.
func liveRun(t *testing.T, n int) (path string, w *harness.Store, ids []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "race", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	for i := 0; i < n; i++ {
		child := must[string](t)(w.StartChildRun(ctx, fmt.Sprintf("clean %d", i), "/w", run, 1))
		ids = append(ids, must[string](t)(w.PutPending(ctx, child, 1, "exec", fmt.Sprintf("rm -rf build/%d", i), nil)))
	}
	return path, w, ids
}

func TestDecideExactlyOnceGoroutines(t *testing.T) {
	path, w, ids := liveRun(t, 200)
	const deciders = 4
	wins := make([]map[string]string, deciders)
	start := time.Now().Add(100 * time.Millisecond).UnixNano()
	var wg sync.WaitGroup
	for g := 0; g < deciders; g++ {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		wins[g] = map[string]string{}
		verdict := []string{"approve", "deny"}[g%2]
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i, id := range ids {
				lockstep(start, i)
				r, err := s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.Verdict(verdict)})
				if err != nil {
					t.Error(err)
					return
				}
				if r.Won {
					wins[g][id] = verdict
				}
			}
		}(g)
	}
	wg.Wait()
	checkOneWinner(t, w, ids, wins)
}

func TestDecideExactlyOnceProcesses(t *testing.T) {
	path, w, ids := liveRun(t, 150)
	start := time.Now().Add(1500 * time.Millisecond).UnixNano()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i, verdict := range []string{"approve", "deny", "approve"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "VIGIL_STORE_CHILD=decide", "VIGIL_PATH="+path, "VIGIL_IDS="+strings.Join(ids, " "),
			"VIGIL_START="+strconv.FormatInt(start, 10), "VIGIL_VERDICT="+verdict)
		out, errb := &strings.Builder{}, &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
		t.Cleanup(func() {
			if errb.Len() > 0 {
				t.Logf("decider %d stderr: %s", i, errb.String())
			}
		})
	}
	// This process races too, through the UI's path.
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mine := map[string]string{}
	for i, id := range ids {
		lockstep(start, i)
		r, err := s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: "deny"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Won {
			mine[id] = "deny"
		}
	}
	wins := []map[string]string{mine}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("decider %d: %v", i, err)
		}
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				m[f[1]] = f[2]
			}
		}
		wins = append(wins, m)
	}
	checkOneWinner(t, w, ids, wins)
}

// lockstep waits for request i's time slot, so every decider attempts the
// same request at the same moment and the races are real.
func lockstep(start int64, i int) {
	time.Sleep(time.Until(time.Unix(0, start).Add(time.Duration(i) * 2 * time.Millisecond)))
}

// checkOneWinner asserts each request was won exactly once and that the
// store holds the winner's verdict.
func checkOneWinner(t *testing.T, w *harness.Store, ids []string, wins []map[string]string) {
	t.Helper()
	spread := make([]int, len(wins))
	for _, id := range ids {
		n, verdict := 0, ""
		for i, m := range wins {
			if v, ok := m[id]; ok {
				n, verdict = n+1, v
				spread[i]++
			}
		}
		if n != 1 {
			t.Errorf("request %s won %d times", id, n)
			continue
		}
		req := must[store.Request](t)(w.Request(context.Background(), store.RequestKey{Kind: store.Approval, ID: id}))
		if req.Decision != verdict {
			t.Errorf("request %s holds %q, the winner decided %q", id, req.Decision, verdict)
		}
	}
	t.Logf("wins per decider: %v", spread)
}
