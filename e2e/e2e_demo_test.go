package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// tmuxSession is vigil running in a detached tmux session.
type tmuxSession struct {
	t       *testing.T
	sock    string
	session string
}

func startTmux(t *testing.T, dir string, cmd ...string) *tmuxSession {
	t.Helper()
	testkit.Tool(t, "tmux", "the end-to-end test drives the real binary in tmux")
	s := &tmuxSession{t: t, sock: filepath.Join(dir, "tmux.sock"), session: fmt.Sprintf("vigil-demo-%d", os.Getpid())}
	s.tmux(append([]string{"-f", "/dev/null", "new-session", "-d", "-s", s.session, "-x", "120", "-y", "40",
		"env", "TERM=xterm-256color"}, cmd...)...)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.tmux("capture-pane", "-p", "-t", s.session) }

// waitFor waits until the screen shows want, and returns that screen.
func (s *tmuxSession) waitFor(want string, d time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		screen := s.screen()
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pid is the pane's process: vigil (env execs it).
func (s *tmuxSession) pid() int {
	n, err := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "-t", s.session, "#{pane_pid}")))
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

func (s *tmuxSession) ended() bool {
	return exec.Command("tmux", "-S", s.sock, "has-session", "-t", s.session).Run() != nil
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// vigil demo, the real binary in a terminal: its harness is a process of
// its own (the explorer's child), foreign C-SQLite processes read the store
// and race vigil's own CLI for a decision while it runs; the WAL is never
// unlinked under the harness, exactly one decider wins and the agent acts
// on the winner; q stops the harness, which closes the store cleanly with
// every committed step in the file. SIGTERM to the explorer stops both.
func TestDemoBinaryBesideForeignParties(t *testing.T) {
	cli := foreign.SQLite3(t)
	py := foreign.Python(t)
	dir := t.TempDir()
	bin := vigilBinary(t)
	path := filepath.Join(dir, "demo.sqlite3")
	s := startTmux(t, dir, bin, "demo", "--store", path, "--speed", "6", "--seed", "2")
	s.waitFor("1 Runs", 60*time.Second)
	tuiPID := s.pid()

	// The harness is another process, the explorer's child: the lease
	// owner names its pid.
	var harness int
	for deadline := time.Now().Add(30 * time.Second); harness == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no lease in the demo store")
		}
		owner, _ := cli.Exec(path, "SELECT owner FROM run_leases ORDER BY run_id DESC LIMIT 1")
		if pid, _, ok := strings.Cut(owner, "-"); ok {
			harness, _ = strconv.Atoi(pid)
		}
	}
	if harness == tuiPID || parentOf(harness) != tuiPID {
		t.Fatalf("the harness (pid %d, parent %d) is not a child process of the explorer (pid %d)", harness, parentOf(harness), tuiPID)
	}
	wal := foreign.WatchWAL(t, path)
	seen := 0
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

	// A live run's approval: the CLI approves while Python denies, at once.
	id := ""
	for deadline := time.Now().Add(90 * time.Second); id == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no approval waited within 90 s:\n%s", s.screen())
		}
		look("while the demo runs")
		id = cli.MustExec(t, path, "SELECT p.id FROM pending_approvals p JOIN runs r ON r.id = p.run_id WHERE p.resolved IS NULL AND r.status = 'running' ORDER BY p.id LIMIT 1")
	}
	at := time.Now().Add(400 * time.Millisecond)
	pyOut := make(chan string, 1)
	go func() {
		out, err := py.ExecAt(path, "UPDATE pending_approvals SET resolved = 'deny' WHERE id = "+id+" AND resolved IS NULL; SELECT changes()", at)
		if err != nil {
			out = err.Error()
		}
		pyOut <- out
	}()
	time.Sleep(time.Until(at.Add(-15 * time.Millisecond))) // vigil takes a few ms to start
	approve := exec.Command(bin, "approve", id, "--store", path)
	out, err := approve.CombinedOutput()
	code := approve.ProcessState.ExitCode()
	pyWon := <-pyOut
	if err != nil && code != 3 {
		t.Fatalf("vigil approve: %v\n%s", err, out)
	}
	if pyWon != "0" && pyWon != "1" {
		t.Fatalf("python's decision: %s", pyWon)
	}
	if (code == 0) == (pyWon == "1") {
		t.Fatalf("winners: vigil approve exit %d (%s), python changed %s rows: exactly one must win", code, strings.TrimSpace(string(out)), pyWon)
	}
	want := "approve"
	if code != 0 {
		want = "deny"
	}
	t.Logf("the race for approval %s: %s won", id, want)
	if got := cli.MustExec(t, path, "SELECT resolved FROM pending_approvals WHERE id = "+id); got != want {
		t.Fatalf("the file holds %q; the winner decided %q", got, want)
	}
	acted := ""
	for deadline := time.Now().Add(60 * time.Second); acted == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never acted on approval %s", id)
		}
		look("while the agent acts")
		acted = cli.MustExec(t, path, "SELECT e.decision FROM policy_events e JOIN pending_approvals p ON e.run_id = p.run_id AND e.step = p.step WHERE p.id = "+id+" AND e.source = 'attached'")
	}
	if acted != want {
		t.Fatalf("the agent acted on %q; the winner decided %q", acted, want)
	}
	for i := 0; i < 10; i++ {
		look(fmt.Sprintf("read %d", i))
		time.Sleep(50 * time.Millisecond)
	}

	// q ends the explorer, which stops the harness.
	s.tmux("send-keys", "-t", s.session, "q")
	for deadline := time.Now().Add(10 * time.Second); !s.ended(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("vigil did not quit on q:\n%s", s.screen())
		}
	}
	waitGone(t, harness, "the demo's harness after the explorer quit")
	got, _ := strconv.Atoi(cli.MustExec(t, path, "SELECT count(*) FROM steps"))
	if got < seen {
		t.Fatalf("after exit the file holds %d steps; foreign reads saw %d", got, seen)
	}
	if ok := cli.MustExec(t, path, "PRAGMA integrity_check"); ok != "ok" {
		t.Fatalf("integrity_check: %s", ok)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("the harness left its -wal: it did not close the store")
	}

	// SIGTERM to the explorer stops it and its harness; the temporary
	// store goes with them.
	s2 := startTmux(t, t.TempDir(), bin, "demo", "--speed", "6")
	s2.waitFor("1 Runs", 60*time.Second)
	pid := s2.pid()
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the explorer has no harness child")
		}
		child = childOf(pid)
	}
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid, "the explorer after SIGTERM")
	waitGone(t, child, "the demo's harness after the explorer's SIGTERM")
}

// childOf is a child process of pid, or 0.
func childOf(pid int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err == nil && parentOf(n) == pid && alive(n) {
			return n
		}
	}
	return 0
}

// The real binary keeps up with a store that goes away and comes back as
// another: deleted, it says what it shows is not current; put back empty,
// it says the store is unavailable and keeps trying; written whole, it
// shows the new store, current again.
func TestStoreGoneAndBackInTmux(t *testing.T) {
	dir := t.TempDir()
	bin := vigilBinary(t)
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.sqlite3")
	w, err := harness.Create(other)
	if err != nil {
		t.Fatal(err)
	}
	w.StartRun(t.Context(), "the store written again", "/w")
	w.Close()
	s := startTmux(t, dir, bin, "--store", path)
	s.waitFor("Coordinate the v2.0 release", 20*time.Second)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.waitFor("NOT CURRENT", 10*time.Second)
	if err := os.WriteFile(path, nil, 0o644); err != nil { // no SQLite connection here holds it
		t.Fatal(err)
	}
	s.waitFor("store unavailable", 10*time.Second)
	if out, err := exec.Command("cp", other, path).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	s.waitFor("the store written again", 15*time.Second)
	// cp writes the file in place: a read while it wrote may have failed,
	// and says so; the next one, of the whole file, is current again.
	var seen []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		scr := s.screen()
		i := strings.Index(scr, "NOT CURRENT")
		if i < 0 {
			break
		}
		if line, _, _ := strings.Cut(scr[i:], "\n"); !slices.Contains(seen, line) {
			seen = append(seen, line)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new store is still shown as not current 5 s after it was written (%q):\n%s", seen, scr)
		}
	}
	t.Logf("said on the way: %q", seen)
}
