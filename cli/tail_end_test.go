package cli

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
)

// tailEnding is one case of how tail ends: the command line, what it
// printed and its exit code, as the golden file records them.
func tailEnding(name string, args []string, r result) string {
	return fmt.Sprintf("== %s\n$ vigil %s\nexit %d\n%s", name, strings.Join(args, " "), r.code, r.stdout)
}

// Every way tail ends on a run that has stopped when it starts, pinned
// with its last line and its exit code (docs/cli.md): finished and
// succeeded 0, finished otherwise 4, paused 5, waiting on recovery 5.
func TestTailEndings(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	rec, err := fixture.AwaitingRecovery(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	var out strings.Builder
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"finished, succeeded", ExitOK, []string{"tail", "1", "--store", p}},
		{"finished, denied", ExitFailed, []string{"tail", "2", "--store", p}},
		{"paused on its approval", ExitPaused, []string{"tail", "3", "--store", p}},
		{"waiting on recovery", ExitPaused, []string{"tail", rec.IDs["run"], "--store", rec.Path}},
	} {
		r := h.run(c.args...)
		r.wantCode(t, c.code)
		if r.stderr != "" {
			t.Errorf("%s: stderr %q", c.name, r.stderr)
		}
		args := append([]string{}, c.args...)
		args[len(args)-1] = "STORE"
		out.WriteString(tailEnding(c.name, args, r))
	}
	golden.RequireEqual(t, out.String())
}

// A run whose driver dies while tail follows it: the dead pid writes
// nothing to the store, so tail notices on its own clock, waits for the
// reading to hold, and ends with exit 6.
func TestTailEndsWhenTheDriverDies(t *testing.T) {
	t.Parallel()
	path := fixtureStore(t)
	w := writer(t, path)
	ctx := context.Background()
	run, err := w.StartRun(ctx, "fix the build", "/work/shop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(ctx, run, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, run, twin.StepRecord{Step: 1, Decision: "read main.go", Result: "[read main.go]", Tokens: 300}); err != nil {
		t.Fatal(err)
	}
	tl := startTailWith(t, func(a *app) { a.tailCheck, a.tailSettle = 20*time.Millisecond, 100*time.Millisecond; a.now = time.Now },
		"tail", run, "--store", path)
	tl.waitLine(t, "#"+run+" step 1  read main.go  →  [read main.go]  (300 tokens)")
	select {
	case code := <-tl.done:
		t.Fatalf("tail stopped while the driver lives (exit %d):\n%s", code, tl.out.String())
	case <-time.After(300 * time.Millisecond):
	}
	pid, err := fixture.DeadPID()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=busy_timeout(5000)"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// kill -9 runs no Drop: the lease stays, naming a process that is gone.
	if _, err := db.Exec("UPDATE run_leases SET owner = ? WHERE run_id = ?", fmt.Sprintf("%d-%d-0", pid, time.Now().Add(-time.Minute).UnixNano()), run); err != nil {
		t.Fatal(err)
	}
	if code := tl.exit(t); code != ExitCrashed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitCrashed, tl.out.String())
	}
	want := fmt.Sprintf("#%s crashed (its driver (pid %d) is gone; a resume would continue it; 1 steps, 300 tokens", run, pid)
	if out := tl.out.String(); !strings.Contains(out, want) {
		t.Fatalf("last line of\n%s\nlacks %q", out, want)
	}
}

// --forever tells each stop and follows on: the paused run's line, then,
// once its host resumed it with the decision and it finished, the finished
// line, and it is still following until Ctrl-C (exit 0).
func TestTailForever(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	tl := startTail(t, "tail", "3", "--store", p, "--forever", "--poll", "20ms")
	tl.waitLine(t, "#3 paused: awaiting_approval (it waits for its host to resume it with a decision on approval:1; 1 steps, 1.1k tokens)")
	w := writer(t, p)
	ctx := context.Background()
	if _, err := w.ResolvePending(ctx, "1", store.VerdictApprove); err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, "3", twin.StepRecord{Step: 2, Decision: "wrote keys/deploy.pub", Result: "[wrote]", Tokens: 500}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, "3", store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	tl.waitLine(t, "#3 step 2  wrote keys/deploy.pub  →  [wrote]  (500 tokens)")
	waitFor(t, 5*time.Second, "the finished line", func() bool { return strings.Contains(tl.out.String(), "#3 finished: success (") })
	select {
	case code := <-tl.done:
		t.Fatalf("--forever stopped (exit %d):\n%s", code, tl.out.String())
	case <-time.After(200 * time.Millisecond):
	}
	tl.cancel()
	if code := tl.exit(t); code != 0 {
		t.Fatalf("exit %d after Ctrl-C", code)
	}
	if n := strings.Count(tl.out.String(), "#3 paused: "); n != 1 {
		t.Errorf("the pause told %d times:\n%s", n, tl.out.String())
	}
}

// startTailWith is startTail with the app adjusted first (its clocks).
func startTailWith(t *testing.T, adjust func(*app), args ...string) *tailing {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tl := &tailing{done: make(chan int, 1), cancel: cancel}
	a := newHarness(t).app(&tl.out, &tl.err)
	adjust(a)
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

// A harness that takes no lease still writes its steps: while they keep
// coming, tail follows them (a crashed reading is believed only after
// tailSettle with no step committed), and says crashed once they stop.
func TestTailFollowsAnUnleasedRunWhileItsStepsCome(t *testing.T) {
	t.Parallel()
	path := fixtureStore(t)
	w := writer(t, path)
	ctx := context.Background()
	run, err := w.StartRun(ctx, "no lease taken", "/work/shop")
	if err != nil {
		t.Fatal(err)
	}
	tl := startTailWith(t, func(a *app) { a.tailCheck, a.tailSettle = 20*time.Millisecond, 300*time.Millisecond; a.now = time.Now },
		"tail", run, "--store", path, "--poll", "20ms")
	const steps = 12
	for i := 1; i <= steps; i++ { // a step every 100 ms: well inside the settle each time
		if err := w.CheckpointStep(ctx, run, twin.StepRecord{Step: i, Decision: fmt.Sprintf("step %d", i), Tokens: 10}); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-tl.done:
			t.Fatalf("tail stopped at step %d while steps were coming (exit %d):\n%s", i, code, tl.out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if code := tl.exit(t); code != ExitCrashed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitCrashed, tl.out.String())
	}
	if out := tl.out.String(); !strings.Contains(out, fmt.Sprintf("#%s step %d  step %d", run, steps, steps)) {
		t.Fatalf("tail did not print every step:\n%s", out)
	}
}
