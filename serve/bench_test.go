package serve

import (
	"bufio"
	"context"
	"encoding/binary"
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

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// BenchmarkServe50Sessions is issue 16's load: the real vigil binary
// serving one store to 50 SSH sessions (x/crypto/ssh clients, each with a
// terminal emulator that draws what it is sent) while a writer commits 20
// steps a second. It reports, over every session, the time from a commit
// to the moment its step is on that session's screen (p50, p99, max, and
// the worst session's p99), and the server process's CPU (cores: its
// user+system time over the wall time). Beside them: the same latencies
// timed when the frame's last byte left the server (srv-*: what the
// server did, whatever the fifty client emulators sharing its cores add),
// both again from when the writer's call returned instead of when it
// began (done-*: without the writer's own commit time), the clients' CPU,
// and the frames and bytes a commit cost each session.
//
//	go test -run '^$' -bench Serve50 -benchtime 1x ./serve/
func BenchmarkServe50Sessions(b *testing.B) {
	// watching: the sessions press no key and share one explorer (mirror.go);
	// own: each presses a key first and has an explorer of its own, drawn
	// by lineScreen; own-bubbletea: the same, drawn by Bubble Tea's
	// renderer, the library lineScreen has to beat (libraryRenderer).
	for _, c := range []struct {
		name string
		own  bool
		env  []string
	}{
		{"watching", false, nil},
		{"own", true, nil},
		{"own-bubbletea", true, []string{"VIGIL_SERVE_RENDERER=bubbletea"}},
	} {
		b.Run(c.name, func(b *testing.B) { benchServe(b, c.own, c.env...) })
	}
}

func benchServe(b *testing.B, own bool, env ...string) {
	sessions, rate, window := 50, 20, 10*time.Second
	if v := os.Getenv("VIGIL_BENCH_SESSIONS"); v != "" {
		sessions, _ = strconv.Atoi(v)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "vigil")
	// VIGIL_BENCH_PROFILE=FILE writes the server's CPU profile over the
	// window to FILE (a build with net/http/pprof: pprof_tag.go).
	profile := os.Getenv("VIGIL_BENCH_PROFILE")
	// vigiltrace: the server keeps what each session's screen wrote, with
	// when each write finished (tap_trace.go), and hands it over when the
	// session ends: the same latency, timed at the server's socket.
	tags := "vigiltrace"
	if profile != "" {
		tags += ",vigilpprof"
	}
	build := []string{"build", "-o", bin, "-tags", tags}
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
	tapDir := filepath.Join(dir, "tap")
	if err := os.Mkdir(tapDir, 0o700); err != nil {
		b.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "NO_COLOR=1", "VIGIL_FRAME_TAP="+tapDir)
	cmd.Env = append(cmd.Env, env...)
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
	committed := map[int]time.Time{} // marker → when the writer's call began
	visible := map[int]time.Time{}   // marker → when it returned
	last := 0
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
	// A session shows its own explorer's first frame before that explorer
	// has read the store, and the reads of fifty (each its own load of the
	// store and of the open agent) took the first 300 ms of the window:
	// the window starts once the server is quiet.
	waitQuiet(b, cmd.Process.Pid, 30*time.Second)
	for _, tm := range terms {
		tm.scr.record()
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	cpu0, wall0 := cpuTime(b, cmd.Process.Pid), time.Now()
	self0 := cpuTime(b, os.Getpid())
	profiled := make(chan error, 1)
	if profile != "" {
		go func() { profiled <- fetchProfile(pprofAddr, window, profile) }()
	}
	b.ResetTimer()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	n := 0
	var writes []time.Duration
	for end := time.Now().Add(window); time.Now().Before(end); {
		<-tick.C
		n++
		at := time.Now()
		if err := w.CheckpointStep(context.Background(), "4", harness.StepRecord{Step: 4 + n, Decision: marker(n), Result: "ok", Tokens: 10}); err != nil {
			b.Fatal(err)
		}
		// A commit is timed from before the writer's call: what the writer
		// itself took (its fsync on a busy disk: hundreds of ms at times) is
		// part of the figure. The done-* figures time it from the call's
		// return, when the commit is visible, and are reported beside it.
		done := time.Now()
		writes = append(writes, done.Sub(at))
		mu.Lock()
		committed[n], visible[n], last = at, done, n
		mu.Unlock()
	}
	tick.Stop()
	time.Sleep(time.Second) // the last commits reach every screen
	cpu, wall := cpuTime(b, cmd.Process.Pid)-cpu0, time.Since(wall0)
	self := cpuTime(b, os.Getpid()) - self0
	b.StopTimer()
	if profile != "" {
		if err := <-profiled; err != nil {
			b.Errorf("profile: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// At the clients: each session's screen as it was after each write
	// that reached it.
	client := make([]func(func(time.Time, string)), sessions)
	for i, tm := range terms {
		client[i] = tm.scr.replay
	}
	ct := latencies(client, last, committed, visible)
	lat, perSession, doneLat, donePer := ct[0].all, ct[0].per, ct[1].all, ct[1].per
	if len(lat) == 0 {
		b.Fatal("no commit reached a screen")
	}
	// At the server: what each session's own screen wrote, as it left
	// (the shared views have none). The sessions end first, for the
	// server to hand over what it kept.
	var srvLat, srvDoneLat []time.Duration
	var srvPer, srvDonePer [][]time.Duration
	if own {
		for _, tm := range terms {
			tm.close()
		}
		taps, err := readTaps(tapDir, sessions, 20*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		server := make([]func(func(time.Time, string)), len(taps))
		frames, bytes := 0, 0
		for _, recs := range taps {
			for _, r := range recs {
				if !r.at.Before(wall0) && !r.at.After(wall0.Add(wall)) {
					frames++
					bytes += len(r.b)
				}
			}
		}
		b.ReportMetric(float64(frames)/float64(len(taps)*n), "srv-frames-per-commit")
		b.ReportMetric(float64(bytes)/float64(max(frames, 1)), "srv-bytes-per-frame")
		for i, recs := range taps {
			scr := newScreen(120, 40)
			scr.recs = recs
			server[i] = scr.replay
		}
		st := latencies(server, last, committed, visible)
		srvLat, srvPer, srvDoneLat, srvDonePer = st[0].all, st[0].per, st[1].all, st[1].per
	}
	report := func(prefix string, lat []time.Duration, per [][]time.Duration, all bool) {
		worst := time.Duration(0)
		missing := 0
		for _, l := range per {
			missing += n - len(l)
			if len(l) > 0 {
				worst = max(worst, pct(l, 0.99))
			}
		}
		if len(lat) == 0 {
			b.Errorf("%sno commit timed", prefix)
			return
		}
		b.ReportMetric(float64(pct(lat, 0.50).Microseconds())/1000, prefix+"p50-ms")
		b.ReportMetric(float64(pct(lat, 0.99).Microseconds())/1000, prefix+"p99-ms")
		b.ReportMetric(float64(worst.Microseconds())/1000, prefix+"worst-session-p99-ms")
		if all {
			b.ReportMetric(float64(pct(lat, 1).Microseconds())/1000, prefix+"max-ms")
			b.ReportMetric(float64(missing), prefix+"missed")
		}
	}
	report("", lat, perSession, true)
	report("done-", doneLat, donePer, false)
	if own {
		report("srv-", srvLat, srvPer, true)
		report("srv-done-", srvDoneLat, srvDonePer, false)
	}
	b.ReportMetric(float64(pct(writes, 1).Microseconds())/1000, "write-max-ms")
	b.ReportMetric(float64(writes[0].Microseconds())/1000, "write-first-ms")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "server-cores")
	b.ReportMetric(self.Seconds()/wall.Seconds(), "clients-cores")
	if f := os.Getenv("VIGIL_BENCH_DUMP"); f != "" {
		dumpLatencies(b, f, perSession, srvPer)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	b.Logf("%d sessions, %d commits in %s: %d screen updates timed at the clients, %d at the server; server CPU %.2fs, the clients' %.2fs, over %.1fs; load average %s",
		sessions, n, window, len(lat), len(srvLat), cpu.Seconds(), self.Seconds(), wall.Seconds(), strings.Join(strings.Fields(string(load))[:3], " "))
}

// waitQuiet waits until the process has used under a tenth of a core over
// half a second.
func waitQuiet(b *testing.B, pid int, within time.Duration) {
	deadline := time.Now().Add(within)
	for {
		c0 := cpuTime(b, pid)
		time.Sleep(500 * time.Millisecond)
		if cpuTime(b, pid)-c0 < 50*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			b.Logf("the server did not settle within %s: timing anyway", within)
			return
		}
	}
}

// latencies replays each session's writes (once: a replay is used up)
// and times each commit from its time in each of froms to the first write
// after which its step is on that screen (or a later step is: it may have
// scrolled by within one frame): over every session, and each session's
// own, one timing for each of froms.
func latencies(sessions []func(func(time.Time, string)), last int, froms ...map[int]time.Time) []timing {
	out := make([]timing, len(froms))
	for k := range out {
		out[k].per = make([][]time.Duration, len(sessions))
	}
	for i, replay := range sessions {
		next := 1
		replay(func(at time.Time, scr string) {
			for m := last; m >= next; m-- {
				if !strings.Contains(scr, marker(m)) {
					continue
				}
				for s := next; s <= m; s++ {
					for k, from := range froms {
						d := at.Sub(from[s])
						out[k].all = append(out[k].all, d)
						out[k].per[i] = append(out[k].per[i], d)
					}
				}
				next = m + 1
				break
			}
		})
	}
	return out
}

// timing is the latencies over every session, and each session's.
type timing struct {
	all []time.Duration
	per [][]time.Duration
}

// readTaps waits for n sessions' taps in dir (tap_trace.go) and reads them.
func readTaps(dir string, n int, within time.Duration) ([][]rec, error) {
	deadline := time.Now().Add(within)
	var names []string
	for {
		names, _ = filepath.Glob(filepath.Join(dir, "tap-*.bin"))
		if len(names) >= n {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the server handed over %d of %d sessions' taps", len(names), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var out [][]rec
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var recs []rec
		for len(raw) >= 12 {
			at := time.Unix(0, int64(binary.LittleEndian.Uint64(raw)))
			l := int(binary.LittleEndian.Uint32(raw[8:]))
			if len(raw) < 12+l {
				return nil, fmt.Errorf("%s: a record cut short", name)
			}
			recs = append(recs, rec{at: at, b: raw[12 : 12+l]})
			raw = raw[12+l:]
		}
		out = append(out, recs)
	}
	return out, nil
}

// dumpLatencies writes each session's latencies in commit order, in ms, a
// line a session (clients, then the server's).
func dumpLatencies(b *testing.B, path string, sides ...[][]time.Duration) {
	var sb strings.Builder
	for i, side := range sides {
		for _, l := range side {
			sb.WriteString(strconv.Itoa(i))
			for _, d := range l {
				sb.WriteString(" " + strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64))
			}
			sb.WriteString("\n")
		}
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Error(err)
	}
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
