package tui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
)

// demoHarnessChild is the demo's harness in a process of its own, as vigil
// demo runs it: it says "ready", prints its log, and stops when its stdin
// closes.
func demoHarnessChild(path string) int {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	out := &syncWriter{w: os.Stdout}
	err := demo.Run(ctx, demo.Options{Path: path, Speed: 6, Seed: 2, Log: out, Ready: func() { fmt.Fprintln(out, "ready") }})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// liveHarness is a demo harness process and what it has logged.
type liveHarness struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	log   []string
	done  chan struct{}
}

func startDemoHarness(t *testing.T, path string) *liveHarness {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIGIL_TUI_CHILD=demo", "VIGIL_DEMO_PATH="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &liveHarness{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.mu.Lock()
			h.log = append(h.log, sc.Text())
			h.mu.Unlock()
			if sc.Text() == "ready" {
				close(ready)
			}
		}
		cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() { h.stop(t) })
	select {
	case <-ready:
	case <-h.done:
		t.Fatal("the demo harness exited before it was ready")
	case <-time.After(60 * time.Second):
		t.Fatal("the demo harness was not ready within 60 s")
	}
	return h
}

// stop closes the harness's stdin (it releases its leases and closes the
// store) and waits for it to exit.
func (h *liveHarness) stop(t *testing.T) {
	h.stdin.Close()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
		t.Error("the demo harness did not stop within 30 s of its stdin closing")
	}
}

var commitLine = regexp.MustCompile(`step \d+: .* \(\d+ tokens\)$`)

// commits is how many steps the harness logged as committed.
func (h *liveHarness) commits() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.log {
		if commitLine.MatchString(l) {
			n++
		}
	}
	return n
}

// The live demo, as vigil demo runs it (the harness a process of its own),
// with the explorer's model in this process and foreign C-SQLite parties
// reading the store and deciding beside it: the harness's WAL is never
// unlinked while it writes, exactly one decider wins a race, the agent acts
// on the winner's verdict, and every step the harness committed is in the
// file after it exits.
func TestLiveDemoBesideForeignParties(t *testing.T) {
	cli := foreign.SQLite3(t)
	py := foreign.Python(t)
	path := filepath.Join(t.TempDir(), "demo.sqlite3")
	h := startDemoHarness(t, path)
	wal := foreign.WatchWAL(t, path)

	d := openDriver(t, path, 120, 40)
	d.clock = time.Now()
	d.wait = retryMin - 100*time.Millisecond // reads beside a busy harness may be slow on a loaded machine
	seen := 0                                // the most steps a foreign read has seen
	look := func(when string) {
		t.Helper()
		n, err := strconv.Atoi(cli.MustExec(t, path, "SELECT count(*) FROM steps"))
		if err != nil {
			t.Fatal(err)
		}
		if n < seen {
			t.Fatalf("%s: a foreign read sees %d steps after one saw %d", when, n, seen)
		}
		seen = n
		wal.Check(t, when)
	}

	// Tail until the agents wait on an approval.
	var key store.RequestKey
	deadline := time.Now().Add(90 * time.Second)
	for key.ID == "" {
		if time.Now().After(deadline) {
			t.Fatal("no approval request within 90 s")
		}
		d.refresh()
		look("while tailing")
		for _, r := range d.m.st.model.Requests() {
			if r.Kind == store.Approval && !r.Resolved {
				key = r.Key()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The explorer approves while Python denies, at once.
	d.press("6")
	selectRequest(d, key.String())
	d.advance(2 * time.Second)
	d.press("a")
	d.contains("?", "y yes")
	pyWon := make(chan string, 1)
	at := time.Now().Add(300 * time.Millisecond)
	go func() {
		out, err := py.ExecAt(path, "UPDATE pending_approvals SET resolved = 'deny' WHERE id = "+key.ID+" AND resolved IS NULL; SELECT changes()", at)
		if err != nil {
			out = "error: " + err.Error()
		}
		pyWon <- out
	}()
	time.Sleep(time.Until(at))
	d.press("y")
	py1 := <-pyWon
	screen := d.screen()
	tuiWon := strings.Contains(screen, "✓ approved: "+key.String())
	tuiLost := strings.Contains(screen, "lost the race: "+key.String())
	switch {
	case py1 != "0" && py1 != "1":
		t.Fatalf("python's decision: %s", py1)
	case tuiWon == (py1 == "1"):
		t.Fatalf("winners: explorer %v, python %v (exactly one must win)\n%s", tuiWon, py1 == "1", screen)
	case !tuiWon && !tuiLost:
		t.Fatalf("the explorer says neither won nor lost:\n%s", screen)
	}
	want := "deny"
	if tuiWon {
		want = "approve"
	}
	t.Logf("the race for %s: %s won", key, map[bool]string{true: "the explorer", false: "python"}[tuiWon])
	if got := cli.MustExec(t, path, "SELECT resolved FROM pending_approvals WHERE id = "+key.ID); got != want {
		t.Fatalf("the file holds %q for %s; the winner decided %q", got, key, want)
	}

	// The agent acts on what won: its policy event says so.
	acted := ""
	for deadline := time.Now().Add(60 * time.Second); acted == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never acted on %s", key)
		}
		time.Sleep(100 * time.Millisecond)
		acted = cli.MustExec(t, path, "SELECT e.decision FROM policy_events e JOIN pending_approvals p ON e.run_id = p.run_id AND e.step = p.step WHERE p.id = "+key.ID+" AND e.source = 'attached'")
		look("while the agent acts")
		d.refresh()
	}
	if acted != want {
		t.Fatalf("the agent acted on %q; the winner decided %q", acted, want)
	}

	// More reads and writes from both sides, then the harness stops.
	for i := 0; i < 10; i++ {
		d.refresh()
		look(fmt.Sprintf("read %d", i))
		time.Sleep(50 * time.Millisecond)
	}
	h.stop(t)
	committed := h.commits()
	got, _ := strconv.Atoi(cli.MustExec(t, path, "SELECT count(*) FROM steps"))
	if got < committed || got < seen {
		t.Fatalf("after the harness exited the file holds %d steps; it committed %d and foreign reads saw %d", got, committed, seen)
	}
	if ok := cli.MustExec(t, path, "PRAGMA integrity_check"); ok != "ok" {
		t.Fatalf("integrity_check: %s", ok)
	}
	t.Logf("%d steps committed, %d in the file, %d seen by foreign reads", committed, got, seen)
}
