//go:build unix

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

// These tests run the real binary: terminal injection through the store
// (issue 12 D2) and hangs on files that are not files (D3).

// builtVigil is the package's one build of the binary (vigilbin_test.go).
func builtVigil(t *testing.T) string {
	t.Helper()
	return vigilBinary(t)
}

// tmuxServer is a tmux server of the test's own, on its own socket.
type tmuxServer struct {
	t    *testing.T
	sock string
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	testkit.Tool(t, "tmux", "the end-to-end test drives the real binary in tmux")
	s := &tmuxServer{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return strings.TrimRight(string(out), "\n")
}

func (s *tmuxServer) screen() string { return s.run("capture-pane", "-p", "-t", "e2e") }

func (s *tmuxServer) waitFor(want string) {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.screen(), want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pidOf is the pid of the process the pane runs, once it is the binary.
func (s *tmuxServer) vigilPID(bin string) int {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pid, _ := strconv.Atoi(s.run("display-message", "-p", "-t", "e2e", "#{pane_pid}"))
		for _, p := range append([]int{pid}, children(pid)...) {
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); err == nil && exe == bin {
				return p
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no vigil process in the pane")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func children(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// gone waits for pid to exit and says how long it took.
func gone(pid int, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			return time.Since(start), true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), false
}

// hostileOutcomes writes the fixture with the outcomes and goals of its
// finished runs set to escape sequences: the APC that retitles tmux, a
// blinking SGR, a carriage return that draws a fake success over a row.
func hostileOutcomes(t *testing.T, dir string) string {
	t.Helper()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE runs SET outcome = ? WHERE id = 1", []any{"\x1b_PWNED\x1b\\"}},
		{"UPDATE run_outcomes SET outcome = ? WHERE run_id = 1", []any{"\x1b_PWNED\x1b\\"}},
		{"UPDATE runs SET outcome = ?, goal = ? WHERE id = 2", []any{"\x1b[41;5mblink", "\r│✓  success \u202Egnp.exe"}},
		{"UPDATE run_outcomes SET outcome = ? WHERE run_id = 2", []any{"\x1b[41;5mblink"}},
		// Text whose width terminals disagree on: a ZWJ family, a skin
		// tone, soft hyphens, an emoji presentation selector.
		{"UPDATE runs SET goal = ? WHERE id = 3", []any{"Rotate 👨\u200d👩\u200d👧 👍🏽 de\u00adploy ❤️ keys"}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestHostileOutcomeInTmux: a run's outcome that is an APC string (tmux
// takes it as the pane title), a blinking SGR and a carriage return are
// drawn as visible text; the pane title stays vigil's while it runs, and
// after q it is the title the shell had before (pushed and popped).
func TestHostileOutcomeInTmux(t *testing.T) {
	bin := builtVigil(t)
	path := hostileOutcomes(t, t.TempDir())
	s := newTmux(t)
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "45", "sh")
	s.run("set-option", "-t", "e2e", "allow-rename", "on")
	s.run("set-option", "-t", "e2e", "set-titles", "on")
	s.run("send-keys", "-t", "e2e", fmt.Sprintf("printf '\\033]2;shell-title\\007'; TERM=xterm-256color %s --store %s; echo EXITED", bin, path), "Enter")
	s.waitFor("Fix the flaky parser test")
	s.waitFor("␛_PWNED␛\\")
	s.waitFor("␍│✓  success")
	// vigil's own title: the fixture's five requests wait.
	if title := s.run("display-message", "-p", "-t", "e2e", "#{pane_title}"); title != "◆ 5 waiting · vigil" {
		t.Fatalf("pane title = %q while vigil runs", title)
	}
	if screen := s.run("capture-pane", "-p", "-e", "-t", "e2e"); blinks(screen) {
		t.Errorf("something on screen blinks:\n%q", screen)
	}
	// Every pane's right border is where tmux draws the line's end: the
	// width vigil measured is the width tmux gave the text.
	s.waitFor("Rotate 👨👩👧 👍")
	lines := strings.Split(s.screen(), "\n")
	for i, l := range lines[:len(lines)-1] { // the status bar has no border
		// (┃ is a scroll mark drawn in the border's place.)
		if l = strings.TrimRight(l, " "); !strings.HasSuffix(l, "│") && !strings.HasSuffix(l, "┃") && !strings.HasSuffix(l, "╮") && !strings.HasSuffix(l, "╯") {
			t.Errorf("line %d lost its right border in tmux:\n%s", i, l)
		}
	}
	s.run("send-keys", "-t", "e2e", "q")
	s.waitFor("EXITED")
	if title := s.run("display-message", "-p", "-t", "e2e", "#{pane_title}"); title != "shell-title" {
		t.Fatalf("after quitting the pane title is %q, not the shell's", title)
	}
}

// blinks reports an SGR sequence in captured screen text that turns on
// blinking (5 or 6, outside a colour's arguments).
func blinks(screen string) bool {
	for _, part := range strings.Split(screen, "\x1b[")[1:] {
		end := strings.IndexByte(part, 'm')
		if end < 0 || strings.ContainsAny(part[:end], "?>=<ABCDEFGHJKSTfhlnrstu") {
			continue
		}
		ps := strings.Split(part[:end], ";")
		for k := 0; k < len(ps); k++ {
			switch ps[k] {
			case "38", "48", "58":
				if k+1 < len(ps) && ps[k+1] == "5" {
					k += 2
				} else if k+1 < len(ps) && ps[k+1] == "2" {
					k += 4
				}
			case "5", "6":
				return true
			}
		}
	}
	return false
}

// fifoStore is a Leviath runs directory with a FIFO as one run's journal
// and another's meta.json, and a third, readable run.
func fifoStore(t *testing.T) (dir, fifoRun string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "runs")
	mk := func(id, meta string, fifo ...string) {
		d := filepath.Join(dir, id)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if meta != "" {
			if err := os.WriteFile(filepath.Join(d, "meta.json"), []byte(meta), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range fifo {
			if err := syscall.Mkfifo(filepath.Join(d, f), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifoRun = "piped-1785427200-0a0a0a0a0a0a"
	mk(fifoRun, `{"run_id":"`+fifoRun+`","status":"running","task":"a journal that is a FIFO","started_at":1785427200,"updated_at":1785427200}`, "run.lvr")
	mk("metapipe-1785427300-0b0b0b0b0b0b", "", "meta.json")
	if err := os.WriteFile(filepath.Join(dir, "metapipe-1785427300-0b0b0b0b0b0b", "run.lvr"), []byte("LVR1\x00\x01"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk("fine-1785427400-0c0c0c0c0c0c", `{"run_id":"fine-1785427400-0c0c0c0c0c0c","status":"starting","task":"a queued run","started_at":1785427400,"updated_at":1785427400}`)
	return dir, fifoRun
}

// TestFIFOsDoNotHang: a FIFO as a run's journal or meta.json, as the store
// itself, and /dev/zero: every command answers within a second, and says
// what the file is.
func TestFIFOsDoNotHang(t *testing.T) {
	bin := builtVigil(t)
	dir, fifoRun := fifoStore(t)
	pipe := filepath.Join(t.TempDir(), "runs.sqlite3")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"runs", "--store", dir}, 0, "a queued run"},
		{[]string{"runs", "--json", "--store", dir}, 0, "a queued run"},
		{[]string{"show", fifoRun, "--store", dir}, 1, "run.lvr: a named pipe (FIFO), not a store file"},
		{[]string{"show", fifoRun, "--json", "--store", dir}, 1, "a named pipe (FIFO)"},
		{[]string{"runs", "--store", filepath.Join(dir, fifoRun, "run.lvr")}, 1, "a named pipe (FIFO), not a store file"},
		{[]string{"runs", "--store", pipe}, 1, "runs.sqlite3: a named pipe (FIFO), not a store file"},
		{[]string{"show", "1", "--store", "/dev/zero"}, 1, "/dev/zero: a character device, not a store file"},
		{[]string{"--store", pipe}, 1, "a named pipe (FIFO)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, bin, c.args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		cancel()
		code := cmd.ProcessState.ExitCode()
		if took > time.Second {
			t.Errorf("vigil %s took %v (exit %d, %v)", strings.Join(c.args, " "), took, code, err)
			continue
		}
		if code != c.code || !strings.Contains(out.String()+errb.String(), c.want) {
			t.Errorf("vigil %s: exit %d\n%s%s\nwant exit %d and %q", strings.Join(c.args, " "), code, out.String(), errb.String(), c.code, c.want)
		}
		if strings.Contains(errb.String(), "empty") {
			t.Errorf("vigil %s calls a FIFO or a device empty: %s", strings.Join(c.args, " "), errb.String())
		}
		// One line for the error; a warning about another run may come
		// first, but never the error again as a warning.
		seen := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
			msg := strings.TrimPrefix(strings.TrimPrefix(l, "vigil: warning: "), "vigil: ")
			if seen[msg] {
				t.Errorf("vigil %s says %q twice", strings.Join(c.args, " "), msg)
			}
			seen[msg] = true
		}
	}
}

// syncBuffer is a buffer the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestExitsWithinASecond: SIGTERM ends a following command (tail) and the
// explorer within a second, and q ends the explorer, on a store with FIFOs
// in it.
func TestExitsWithinASecond(t *testing.T) {
	bin := builtVigil(t)
	dir, _ := fifoStore(t)
	live, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	// tail follows the live run until it ends, which it never does.
	cmd := exec.Command(bin, "tail", "4", "--store", live)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "step 1") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	start := time.Now()
	select {
	case <-exited:
		if took := time.Since(start); took > time.Second {
			t.Errorf("tail took %v to exit on SIGTERM", took)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("tail did not exit on SIGTERM:\n%s", out.String())
	}

	// The explorer on the store with FIFOs: q, then SIGTERM.
	for _, how := range []string{"q", "SIGTERM"} {
		s := newTmux(t)
		s.run("-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", "140", "-y", "40", "env", "TERM=xterm-256color", bin, "--store", dir)
		s.waitFor("a queued run")
		pid := s.vigilPID(bin)
		if how == "q" {
			s.run("send-keys", "-t", "e2e", "q")
		} else {
			syscall.Kill(pid, syscall.SIGTERM)
		}
		if took, ok := gone(pid, 5*time.Second); !ok || took > time.Second {
			t.Errorf("the explorer took %v to exit on %s (exited: %v)", took, how, ok)
		}
	}
}
