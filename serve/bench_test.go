package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/fixture"
	"github.com/vigil-run/vigil/store/ioharness"
)

// BenchmarkServe50Sessions is issue 16's load: the real vigil binary
// serving one store to 50 SSH sessions (x/crypto/ssh clients, each with a
// terminal emulator that draws what it is sent) while a writer commits 20
// steps a second. It reports, over every session, the time from a commit
// to the moment its step is on that session's screen (p50, p99, max, and
// the worst session's p99), and the server process's CPU (cores: its
// user+system time over the wall time).
//
//	go test -run '^$' -bench Serve50 -benchtime 1x ./serve/
func BenchmarkServe50Sessions(b *testing.B) {
	// watching: the sessions press no key and share one explorer (mirror.go);
	// own: each presses a key first and has an explorer of its own.
	for _, own := range []bool{false, true} {
		name := "watching"
		if own {
			name = "own"
		}
		b.Run(name, func(b *testing.B) { benchServe(b, own) })
	}
}

func benchServe(b *testing.B, own bool) {
	sessions, rate, window := 50, 20, 10*time.Second
	if v := os.Getenv("VIGIL_BENCH_SESSIONS"); v != "" {
		sessions, _ = strconv.Atoi(v)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "vigil")
	// VIGIL_BENCH_PROFILE=FILE writes the server's CPU profile over the
	// window to FILE (a build with net/http/pprof: pprof_tag.go).
	profile := os.Getenv("VIGIL_BENCH_PROFILE")
	build := []string{"build", "-o", bin}
	if profile != "" {
		build = append(build, "-tags", "vigilpprof")
	}
	if out, err := exec.Command("go", append(build, "github.com/vigil-run/vigil")...).CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	path, err := fixture.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	viewer := newUser(b, "bench@load")
	keys := writeKeys(b, dir, "viewers", viewer)
	port := freePort(b)
	cmd := exec.Command(bin, "serve", "--store", path, "--authorized-keys", keys, "--listen", "127.0.0.1:"+port,
		"--rate-limit", "10000", "--idle-timeout", "0")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "NO_COLOR=1")
	pprofAddr := ""
	if profile != "" {
		pprofAddr = "127.0.0.1:" + freePort(b)
		cmd.Env = append(cmd.Env, "VIGIL_PPROF="+pprofAddr)
	}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				close(ready)
			}
			if os.Getenv("VIGIL_BENCH_LOG") != "" && strings.Contains(sc.Text(), "frames so far") {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		b.Fatal("vigil serve did not start")
	}
	ts := &testServer{addr: "127.0.0.1:" + port}

	var mu sync.Mutex
	committed := map[int]time.Time{} // marker → commit time
	last := 0
	var lat []time.Duration
	perSession := make([][]time.Duration, sessions)
	terms := make([]*term, sessions)
	for i := range terms {
		terms[i] = openTerm(b, ts, viewer, 120, 40)
	}
	for _, tm := range terms {
		tm.waitFor("Coordinate the v2.0 release", 60*time.Second)
	}
	if own {
		for _, tm := range terms {
			tm.typ("3") // focus the timeline: an explorer of its own
		}
		for _, tm := range terms {
			tm.waitFor("bench@load (viewer)", 60*time.Second)
		}
	}
	for _, tm := range terms {
		tm.scr.record()
	}
	w, err := ioharness.OpenWriter(path)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	cpu0, wall0 := cpuTime(b, cmd.Process.Pid), time.Now()
	profiled := make(chan error, 1)
	if profile != "" {
		go func() { profiled <- fetchProfile(pprofAddr, window, profile) }()
	}
	b.ResetTimer()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	n := 0
	for end := time.Now().Add(window); time.Now().Before(end); {
		<-tick.C
		n++
		at := time.Now()
		if err := w.CheckpointStep(context.Background(), "4", ioharness.StepRecord{Step: 4 + n, Decision: marker(n), Result: "ok", Tokens: 10}); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		committed[n], last = at, n
		mu.Unlock()
	}
	tick.Stop()
	time.Sleep(time.Second) // the last commits reach every screen
	cpu, wall := cpuTime(b, cmd.Process.Pid)-cpu0, time.Since(wall0)
	b.StopTimer()
	if profile != "" {
		if err := <-profiled; err != nil {
			b.Errorf("profile: %v", err)
		}
	}
	// Each session's screen as it was after each write that reached it:
	// a step is on screen at the first write after which its marker is (or
	// a later one is: it may have scrolled by within one frame).
	for i, tm := range terms {
		next := 1
		tm.scr.replay(func(at time.Time, scr string) {
			for m := last; m >= next; m-- {
				if !strings.Contains(scr, marker(m)) {
					continue
				}
				for s := next; s <= m; s++ {
					d := at.Sub(committed[s])
					lat = append(lat, d)
					perSession[i] = append(perSession[i], d)
				}
				next = m + 1
				break
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no commit reached a screen")
	}
	worst := time.Duration(0)
	missing := 0
	for _, l := range perSession {
		missing += n - len(l)
		if len(l) > 0 {
			worst = max(worst, pct(l, 0.99))
		}
	}
	b.ReportMetric(float64(pct(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(lat, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(pct(lat, 1).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-session-p99-ms")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "server-cores")
	b.ReportMetric(float64(missing), "missed")
	load, _ := os.ReadFile("/proc/loadavg")
	b.Logf("%d sessions, %d commits in %s: %d screen updates timed, %d missed; server CPU %.2fs over %.1fs; load average %s",
		sessions, n, window, len(lat), missing, cpu.Seconds(), wall.Seconds(), strings.Join(strings.Fields(string(load))[:3], " "))
}

// fetchProfile writes the server's CPU profile over d to path.
func fetchProfile(addr string, d time.Duration, path string) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func marker(n int) string { return fmt.Sprintf("bench-%05d", n) }

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func freePort(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// cpuTime is a process's user+system time (Linux /proc; clock ticks of 10 ms).
func cpuTime(tb testing.TB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Skip("no /proc: cannot measure the server's CPU")
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
