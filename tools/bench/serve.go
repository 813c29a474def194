package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	mrand "math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// serveSessions is how many sessions watch the live run in the serve row:
// the measured one (the stock ssh in the bench's tmux pane) and the rest
// x/crypto/ssh clients held by the bench.
const serveSessions = 50

// serveFigure is one build's commit → screen through vigil serve: with the
// measured session alone at its view, and with the others watching too.
type serveFigure struct {
	alone, loaded []time.Duration
	cpu           time.Duration // the server's CPU over the loaded commits
	wall          time.Duration // and the wall time they took
}

// commitToServe times foreign commits to the measured ssh session's screen
// while vigil serve serves the small store's copy: c.commits with that
// session alone and c.commits with 49 more watching, a half of each in
// turn. With -before, the other build is measured the same way after it,
// on a copy of its own.
func commitToServe(c *config, t *term, small string) (row, error) {
	now, err := serveRun(c, t, c.vigil, small, "serve.sqlite3")
	if err != nil {
		return row{}, err
	}
	p99 := quantile(now.loaded, 0.99)
	r := row{figure: fmt.Sprintf("commit by a C-SQLite writer → row on an ssh screen, %d `vigil serve` sessions watching, p99 over %d commits", serveSessions, c.commits),
		now:   fmt.Sprintf("%s (p50 %s)", ms(p99), ms(quantile(now.loaded, 0.5))),
		goal:  "≤ 25 ms",
		ratio: float64(p99) / float64(25*time.Millisecond),
		detail: fmt.Sprintf("p90 %s; the measured session alone, in turn with them: p99 %s (p50 %s, p90 %s); server CPU with %d watching %.2f cores",
			ms(quantile(now.loaded, 0.9)), ms(quantile(now.alone, 0.99)), ms(quantile(now.alone, 0.5)), ms(quantile(now.alone, 0.9)),
			serveSessions, now.cores())}
	if c.before != "" {
		b, err := serveRun(c, t, c.before, small, "serve-before.sqlite3")
		if err != nil {
			return row{}, fmt.Errorf("-before: %w", err)
		}
		r.detail += fmt.Sprintf("; before, after it: %d watching p99 %s (p50 %s, p90 %s), alone p99 %s (p50 %s, p90 %s), %.2f cores",
			serveSessions, ms(quantile(b.loaded, 0.99)), ms(quantile(b.loaded, 0.5)), ms(quantile(b.loaded, 0.9)),
			ms(quantile(b.alone, 0.99)), ms(quantile(b.alone, 0.5)), ms(quantile(b.alone, 0.9)), b.cores())
	}
	return r, nil
}

func (f serveFigure) cores() float64 {
	if f.wall <= 0 {
		return 0
	}
	return float64(f.cpu) / float64(f.wall)
}

// serveRun is one build's figure: its server on a fresh copy of the store,
// the writer holding the live run's lease.
func serveRun(c *config, t *term, bin, small, name string) (serveFigure, error) {
	var f serveFigure
	path, err := copyStore(c, small, name)
	if err != nil {
		return f, err
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		return f, fmt.Errorf("the measured session is the stock ssh client (openssh-client), which is not installed")
	}
	dir, err := os.MkdirTemp(c.work, "serve-")
	if err != nil {
		return f, err
	}
	k, err := newServeKeys(dir)
	if err != nil {
		return f, err
	}
	w, err := startWriter(path, liveRun)
	if err != nil {
		return f, err
	}
	defer w.close()
	srv, err := startServe(bin, path, dir, k)
	if err != nil {
		return f, err
	}
	defer srv.stop()
	if err := k.knownHost(srv.addr); err != nil {
		return f, err
	}
	_, port, _ := net.SplitHostPort(srv.addr)
	if _, err := t.start("ssh", "-F", "/dev/null", "-t", "-p", port, "-i", k.userFile, "-o", "IdentitiesOnly=yes",
		"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+k.knownFile, "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes", "bench@127.0.0.1"); err != nil {
		return f, err
	}
	defer t.stop()
	marker := fmt.Sprintf("task %d: refactor", newestRoot(smallShape))
	if _, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, marker) }, 30*time.Second); !ok {
		return f, fmt.Errorf("the ssh session never showed the runs list; the screen:\n%s\nthe server's log:\n%s", t.screen(), srv.log())
	}
	// Alone and with the others in turn, twice, each a half of the
	// commits: the load of a shared machine drifts, and the two figures
	// are to be compared.
	step := liveFirstStep
	commits := func(seed int64, n int) ([]time.Duration, error) {
		ds, err := timeCommits(t, w, seed, step, n)
		step += len(ds)
		return ds, err
	}
	for half := 0; half < 2; half++ {
		n := c.commits / 2
		if half == 0 {
			n = c.commits - n
		}
		ds, err := commits(int64(17+2*half), n)
		f.alone = append(f.alone, ds...)
		if err != nil {
			return f, fmt.Errorf("alone: %w", err)
		}
		watchers, err := watch(srv.addr, k, serveSessions-1, t.w, t.h, marker)
		if err != nil {
			watchers.close()
			return f, fmt.Errorf("%w; the server's log:\n%s", err, srv.log())
		}
		// Each joining seat had the view drawn whole for every seat: let
		// that pass before timing.
		time.Sleep(time.Second)
		cpu0, wall0 := procCPU(srv.cmd.Process.Pid), time.Now()
		ds, err = commits(int64(18+2*half), n)
		f.loaded = append(f.loaded, ds...)
		f.cpu, f.wall = f.cpu+procCPU(srv.cmd.Process.Pid)-cpu0, f.wall+time.Since(wall0)
		dead := watchers.ended()
		watchers.close()
		if err != nil {
			return f, fmt.Errorf("with %d watching: %w", serveSessions, err)
		}
		if dead > 0 {
			return f, fmt.Errorf("%d of the %d watching sessions ended while measured; the server's log:\n%s", dead, serveSessions-1, srv.log())
		}
		// The server lets the closed sessions' seats go.
		time.Sleep(time.Second)
	}
	return f, nil
}

// timeCommits commits n steps at random 20–80 ms intervals and times each
// from the writer's COMMIT returning to the first screen that shows its
// row.
func timeCommits(t *term, w *foreignWriter, seed int64, first, n int) ([]time.Duration, error) {
	rng := mrand.New(mrand.NewSource(seed))
	var ds []time.Duration
	for i := 0; i < n; i++ {
		time.Sleep(time.Duration(20+rng.Intn(60)) * time.Millisecond)
		text := fmt.Sprintf("mark%04d", first+i)
		at, err := w.steps(liveRun, first+i, 1, text)
		if err != nil {
			return ds, err
		}
		seen, ok := t.waitFor(func(sc string) bool { return strings.Contains(sc, text) }, 10*time.Second)
		if !ok {
			return ds, fmt.Errorf("commit %d never reached the screen:\n%s", i, t.screen())
		}
		ds = append(ds, seen.Sub(at))
	}
	return ds, nil
}

// serveKeys are the bench's own: the server's host key, the user's key
// (OpenSSH files the stock ssh reads), and the files naming them.
type serveKeys struct {
	host, user            gossh.Signer
	hostFile, userFile    string
	authorized, knownFile string
}

func newServeKeys(dir string) (*serveKeys, error) {
	k := &serveKeys{hostFile: filepath.Join(dir, "host_ed25519"), userFile: filepath.Join(dir, "user_ed25519"),
		authorized: filepath.Join(dir, "authorized_keys"), knownFile: filepath.Join(dir, "known_hosts")}
	var err error
	if k.host, err = writeKey(k.hostFile, "vigil-bench host"); err != nil {
		return nil, err
	}
	if k.user, err = writeKey(k.userFile, "bench@watch"); err != nil {
		return nil, err
	}
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k.user.PublicKey()))) + " bench@watch\n"
	return k, os.WriteFile(k.authorized, []byte(line), 0o600)
}

// knownHost writes the known_hosts line the stock ssh checks the server by.
func (k *serveKeys) knownHost(addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	line := fmt.Sprintf("[%s]:%s %s", host, port, gossh.MarshalAuthorizedKey(k.host.PublicKey()))
	return os.WriteFile(k.knownFile, []byte(line), 0o600)
}

// writeKey makes an Ed25519 key and writes it in OpenSSH's format, mode
// 0600 (ssh and vigil serve both refuse a key others may read).
func writeKey(path, comment string) (gossh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := gossh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return gossh.NewSignerFromKey(priv)
}

// server is a running vigil serve.
type server struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	logs strings.Builder
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// startServe starts vigil serve on path with the bench's keys, its state
// and config under dir, and returns once it listens.
func startServe(bin, path, dir string, k *serveKeys) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{addr: "127.0.0.1:" + port}
	s.cmd = exec.Command(bin, "serve", "--store", path, "--listen", s.addr, "--host-key", k.hostFile,
		"--authorized-keys", k.authorized, "--rate-limit", "10000", "--idle-timeout", "0")
	s.cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if strings.Contains(sc.Text(), "listening on") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
		return s, nil
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("vigil serve did not start listening in 30 s:\n%s", s.log())
	}
}

func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}

// watchers are x/crypto/ssh sessions with a terminal each, reading what the
// server sends as it comes, as a terminal would (and throwing it away).
type watchers struct {
	clients []*gossh.Client
	mu      sync.Mutex
	gone    int
}

// watch opens n sessions with a w×h terminal of the TERM the measured
// session's ssh sends (so all share its view), and returns once each has
// been sent marker.
func watch(addr string, k *serveKeys, n, w, h int, marker string) (*watchers, error) {
	ws := &watchers{}
	cfg := &gossh.ClientConfig{User: "bench", Auth: []gossh.AuthMethod{gossh.PublicKeys(k.user)},
		HostKeyCallback: gossh.FixedHostKey(k.host.PublicKey()), Timeout: 30 * time.Second}
	seen := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		cl, err := gossh.Dial("tcp", addr, cfg)
		if err != nil {
			return ws, fmt.Errorf("watching session %d: %v", i+1, err)
		}
		ws.clients = append(ws.clients, cl)
		sess, err := cl.NewSession()
		if err != nil {
			return ws, fmt.Errorf("watching session %d: %v", i+1, err)
		}
		if err := sess.RequestPty("xterm-256color", h, w, gossh.TerminalModes{gossh.ECHO: 0}); err != nil {
			return ws, fmt.Errorf("watching session %d: pty: %v", i+1, err)
		}
		out, err := sess.StdoutPipe()
		if err != nil {
			return ws, err
		}
		if _, err := sess.StdinPipe(); err != nil { // held open: no EOF, no key
			return ws, err
		}
		if err := sess.Shell(); err != nil {
			return ws, fmt.Errorf("watching session %d: shell: %v", i+1, err)
		}
		go ws.read(out, marker, seen)
	}
	deadline := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-seen:
		case <-deadline:
			return ws, fmt.Errorf("%d of %d watching sessions never showed %q in 60 s", n-i, n, marker)
		}
	}
	return ws, nil
}

// read takes the session's output as it comes; it says once when marker
// has been sent (a window of the stream is kept to find it in).
func (ws *watchers) read(out io.Reader, marker string, seen chan<- struct{}) {
	buf := make([]byte, 32<<10)
	var tail []byte
	found := false
	for {
		n, err := out.Read(buf)
		if !found {
			tail = append(tail, buf[:n]...)
			if strings.Contains(string(tail), marker) {
				found, tail = true, nil
				seen <- struct{}{}
			} else if len(tail) > 1<<20 {
				tail = tail[len(tail)-len(marker):]
			}
		}
		if err != nil {
			ws.mu.Lock()
			ws.gone++
			ws.mu.Unlock()
			return
		}
	}
}

// ended is how many sessions' output has ended.
func (ws *watchers) ended() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.gone
}

func (ws *watchers) close() {
	for _, cl := range ws.clients {
		cl.Close()
	}
}
