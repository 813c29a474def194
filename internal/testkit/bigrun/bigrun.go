//go:build unix

// Package bigrun runs the real vigil binary on large stores for the memory
// and time bounds (issue 12): it builds the binary once, runs one command
// line, and reports how long it took and its peak resident set (the
// kernel's ru_maxrss). Tests that use it are gated behind VIGIL_BIG=1 so
// that CI stays quick; `VIGIL_BIG=1 go test -run Big ./...` runs them.
package bigrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// Enabled says whether the big tests run.
func Enabled() bool { return os.Getenv("VIGIL_BIG") != "" }

// Skip skips t unless the big tests run.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip("a big-store bound: set VIGIL_BIG=1 to run it")
	}
}

// CacheDir is where big stores are kept between runs: building one takes
// a while.
func CacheDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "vigil-bench", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var built struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// Binary builds vigil once.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-bigrun-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "vigil")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, "github.com/vigil-run/vigil").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// Result is one run of the binary.
type Result struct {
	Took           time.Duration
	CPU            time.Duration // user + system: what the machine's other load does not inflate
	MaxRSS         int64         // bytes
	Code           int
	Stdout, Stderr []byte
	OutBytes       int64
}

// countWriter counts what it is given and keeps only the first bytes.
type countWriter struct {
	n    int64
	head bytes.Buffer
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.head.Len() < 64<<10 {
		c.head.Write(p[:min(len(p), 64<<10-c.head.Len())])
	}
	return len(p), nil
}

// Old is another build to measure beside this one (VIGIL_BIG_OLD, the path
// of a vigil binary), or "" for none: before and after in one run.
func Old() string { return os.Getenv("VIGIL_BIG_OLD") }

// Run runs the binary with args, standard output counted and mostly
// dropped, and returns what it measured.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	return RunWith(t, Binary(t), args...)
}

// RunWith is Run of another binary.
func RunWith(t testing.TB, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out countWriter
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	start := time.Now()
	err := cmd.Start()
	// The child's own high-water mark, read while it runs: ru_maxrss of a
	// child forked from a test that has just built a big store in memory
	// counts the test's resident set (Linux carries it over the exec).
	var hwm atomic.Int64
	done := make(chan struct{})
	polled := make(chan struct{})
	if err == nil {
		go func() {
			defer close(polled)
			status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
			for {
				if v := vmHWM(status); v > hwm.Load() {
					hwm.Store(v)
				}
				select {
				case <-done:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		err = cmd.Wait()
		close(done)
		<-polled
	}
	r := Result{Took: time.Since(start), Stdout: out.head.Bytes(), Stderr: errb.Bytes(), OutBytes: out.n}
	if cmd.ProcessState == nil {
		t.Fatalf("vigil %v: %v", args, err)
	}
	r.Code = cmd.ProcessState.ExitCode()
	r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		if runtime.GOOS == "darwin" {
			r.MaxRSS = ru.Maxrss
		}
	}
	if v := hwm.Load(); v > 0 {
		r.MaxRSS = v
	}
	return r
}

// vmHWM is a process's peak resident set from its /proc status (0 when
// there is none: not Linux, or the process is gone).
func vmHWM(status string) int64 {
	b, _ := os.ReadFile(status)
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) >= 2 && string(f[0]) == "VmHWM:" {
			return int64(atoi(string(f[1]))) * 1024
		}
	}
	return 0
}

// Explore starts the explorer on a terminal (tmux, 160×45) with args and
// reports how long it took until want was on screen, and the process's
// peak resident set (VmHWM) then and after settle more.
func Explore(t testing.TB, want string, settle time.Duration, args ...string) (firstRows time.Duration, hwm int64) {
	t.Helper()
	return ExploreWith(t, Binary(t), want, settle, args...)
}

// ExploreWith is Explore of another binary.
func ExploreWith(t testing.TB, bin, want string, settle time.Duration, args ...string) (firstRows time.Duration, hwm int64) {
	t.Helper()
	testkit.Tool(t, "tmux", "the big-store bound measures the explorer in tmux")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(a ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, a...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", a, err, out)
		}
		return string(out)
	}
	defer exec.Command("tmux", "-S", sock, "kill-server").Run()
	start := time.Now()
	tmux(append([]string{"-f", "/dev/null", "new-session", "-d", "-s", "big", "-x", "160", "-y", "45", "env", "TERM=xterm-256color", bin}, args...)...)
	pid := 0
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if bytes.Contains([]byte(tmux("capture-pane", "-p", "-t", "big")), []byte(want)) {
			firstRows = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the explorer never showed %q:\n%s", want, tmux("capture-pane", "-p", "-t", "big"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(settle)
	p := bytes.TrimSpace([]byte(tmux("display-message", "-p", "-t", "big", "#{pane_pid}")))
	pid = atoi(string(p))
	b, _ := os.ReadFile("/proc/" + string(p) + "/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) >= 2 && string(f[0]) == "VmHWM:" {
			hwm = int64(atoi(string(f[1]))) * 1024
		}
	}
	_ = pid
	tmux("send-keys", "-t", "big", "q")
	return firstRows, hwm
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
