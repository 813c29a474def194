package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// tailing runs `vigil tail` in the background and lets the test read what
// it has printed so far.
type tailing struct {
	out, err syncBuffer
	done     chan int
	cancel   context.CancelFunc
}

func startTail(t *testing.T, args ...string) *tailing {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tl := &tailing{done: make(chan int, 1), cancel: cancel}
	a := newHarness(t).app(&tl.out, &tl.err)
	go func() { tl.done <- a.run(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-tl.done:
		case <-time.After(10 * time.Second):
			t.Error("tail did not stop")
		}
	})
	return tl
}

func (tl *tailing) waitLine(t *testing.T, line string) {
	t.Helper()
	waitFor(t, 5*time.Second, "the line "+line, func() bool {
		return strings.Contains(tl.out.String(), line+"\n")
	})
}

func (tl *tailing) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-tl.done:
		tl.done <- code // for the cleanup
		return code
	case <-time.After(5 * time.Second):
		t.Fatalf("tail did not exit; it printed:\n%s\nstderr:\n%s", tl.out.String(), tl.err.String())
	}
	return -1
}

func TestTailFollowsTree(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"push", "poll"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := fixtureStore(t)
			args := []string{"tail", "4", "--store", p}
			if mode == "poll" {
				args = append(args, "--poll", "20ms")
			}
			tl := startTail(t, args...)
			// The steps already there, the tree's included, in commit order.
			tl.waitLine(t, "#7 step 1  read go.mod  →  [read go.mod]  (1400 tokens)")
			tl.waitLine(t, "#4 step 4  ran make release-dry-run (exit 0)  →  [ok] 12 artifacts  (3300 tokens)")
			existing := tl.out.String()
			contains(t, existing,
				"#4 step 1  read RELEASING.md  →  [read RELEASING.md] 42 lines  (2100 tokens)\n",
				"#5 step 2  retry 1 after Server (HTTP 529) in 1.5s\n",
				"#5 step 2  git log v1.9.0..HEAD ␛]0;pwned␇(86 commits)  →  [git log]  (3900 tokens)\n")
			if strings.Index(existing, "#4 step 1 ") > strings.Index(existing, "#5 step 1 ") ||
				strings.Index(existing, "#7 step 1 ") > strings.Index(existing, "#4 step 4 ") {
				t.Errorf("existing steps are not in commit order:\n%s", existing)
			}
			if !sanitize.Safe(existing) {
				t.Errorf("tail printed control characters: %q", existing)
			}

			// A writer commits while tail follows: a step of the root, then
			// a child spawned after tail started, then the root finishes.
			ctx := context.Background()
			w := writer(t, p)
			if err := w.CheckpointStep(ctx, "4", twin.StepRecord{Step: 5, Decision: "tagged v2.0.0", Result: "[ok] tag pushed\nsecond line", Tokens: 1234}); err != nil {
				t.Fatal(err)
			}
			tl.waitLine(t, "#4 step 5  tagged v2.0.0  →  [ok] tag pushed  (1234 tokens)")
			child, err := w.StartChildRun(ctx, "worker: announce", "/work/shop", "4", 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.CheckpointStep(ctx, child, twin.StepRecord{Step: 1, Decision: "sent the mail", Result: "[sent]", Tokens: 99}); err != nil {
				t.Fatal(err)
			}
			tl.waitLine(t, "#"+child+" step 1  sent the mail  →  [sent]  (99 tokens)")
			if err := w.FinishRun(ctx, "4", store.OutcomeSuccess); err != nil {
				t.Fatal(err)
			}
			if code := tl.exit(t); code != 0 {
				t.Fatalf("exit %d; stderr %q", code, tl.err.String())
			}
			out := tl.out.String()
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "#4 finished: success (5 steps, ") {
				t.Fatalf("last line %q", last)
			}
			// The run's own counts, then its whole tree's: the child that
			// joined while tail ran is counted too.
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "#4 finished: success (5 steps, 12.1k tokens, ") ||
				!strings.HasSuffix(last, "; whole tree: 5 agents, 12 steps, 24.3k tokens)") {
				t.Fatalf("last line %q does not give the run's and the tree's counts", last)
			}
			if strings.Count(out, "#4 step 5 ") != 1 {
				t.Errorf("a step printed twice:\n%s", out)
			}
		})
	}
}

func TestTailFinishedRun(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	r := newHarness(t).run("tail", "1", "--store", p)
	r.wantCode(t, 0)
	want := `#1 step 1  read src/parse.go  →  [ok]  (900 tokens)
#1 step 2  grep "flaky" (2 hits)  →  [ok]  (1050 tokens)
#1 step 3  ran go test ./parse/... (exit 1)  →  [ok]  (1200 tokens)
#1 step 4  wrote src/parse.go  →  [ok]  (1350 tokens)
#1 step 5  ran go test ./... (exit 0)  →  [ok]  (1500 tokens)
#1 finished: success (5 steps, 6k tokens, 4m00s)
`
	if r.stdout != want {
		t.Fatalf("got\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestTailInterrupted(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	tl := startTail(t, "tail", "3", "--store", p, "--forever") // paused: --forever waits for its host
	tl.waitLine(t, "#3 step 1  awaiting approval (request 1)  (1100 tokens)")
	tl.cancel() // Ctrl-C
	if code := tl.exit(t); code != 0 {
		t.Fatalf("exit %d after Ctrl-C; stderr %q", code, tl.err.String())
	}
}
