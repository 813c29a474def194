package serve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/ioharness"
)

// user is a key pair with a name (its authorized_keys comment).
type user struct {
	name   string
	signer gossh.Signer
}

func newUser(t testing.TB, name string) user {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return user{name: name, signer: s}
}

func (u user) line() string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(u.signer.PublicKey()))) + " " + u.name + "\n"
}

func writeKeys(t testing.TB, dir, name string, users ...user) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# " + name + "\n")
	for _, u := range users {
		b.WriteString(u.line())
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuf is a log the server writes and the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	addr    string
	srv     *Server
	log     *syncBuf
	store   string
	state   string
	viewer  user
	approve user
}

func openStore(path string, ro bool) (store.Source, error) {
	return store.Open(path, store.Options{ReadOnly: ro})
}

// startServer serves a fixture store with one viewer (vera) and one
// approver (alice).
func startServer(t testing.TB, mod func(*Config)) *testServer {
	t.Helper()
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{log: &syncBuf{}, store: path, state: filepath.Join(dir, "state"),
		viewer: newUser(t, "vera@laptop"), approve: newUser(t, "alice@desk")}
	cfg := Config{
		AuthorizedKeys: writeKeys(t, dir, "viewers", ts.viewer),
		Approvers:      writeKeys(t, dir, "approvers", ts.approve),
		Stores:         []string{path}, StateDir: ts.state, Open: openStore, Log: ts.log,
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done; srv.Close() })
	ts.addr, ts.srv = l.Addr().String(), srv
	return ts
}

// term is one SSH session with a terminal, as a person's ssh -t opens it.
type term struct {
	t      testing.TB
	client *gossh.Client
	sess   *gossh.Session
	in     io.WriteCloser
	out    *syncBuf
	scr    *screen
}

// screen is a terminal emulator the session draws on: what a person
// would see, whatever cells the renderer chose to send.
type screen struct {
	mu sync.Mutex
	vt *vt.Emulator
	// recording: writes are kept with their arrival time, not drawn, until
	// replay (the bench: drawing fifty screens as they arrive would time
	// the test's own terminals, not the server).
	recording bool
	recs      []rec
}

type rec struct {
	at time.Time
	b  []byte
}

func (s *screen) record() {
	s.mu.Lock()
	s.recording = true
	s.mu.Unlock()
}

// replay draws what was recorded, calling fn after each write with its
// arrival time and the screen then.
func (s *screen) replay(fn func(at time.Time, scr string)) {
	s.mu.Lock()
	recs := s.recs
	s.recs, s.recording = nil, false
	s.mu.Unlock()
	for _, r := range recs {
		s.mu.Lock()
		s.vt.Write(r.b)
		scr := s.vt.String()
		s.mu.Unlock()
		fn(r.at, scr)
	}
}

func newScreen(w, h int) *screen {
	s := &screen{vt: vt.NewEmulator(w, h)}
	go io.Copy(io.Discard, s.vt) // the emulator's replies to queries
	return s
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording {
		s.recs = append(s.recs, rec{at: time.Now(), b: append([]byte(nil), p...)})
		return len(p), nil
	}
	return s.vt.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vt.String()
}

func dial(ts *testServer, u user) (*gossh.Client, error) {
	return gossh.Dial("tcp", ts.addr, &gossh.ClientConfig{User: "any", Auth: []gossh.AuthMethod{gossh.PublicKeys(u.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
}

func openTerm(t testing.TB, ts *testServer, u user, w, h int) *term {
	t.Helper()
	c, err := dial(ts, u)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, client: c, sess: s, out: &syncBuf{}, scr: newScreen(w, h)}
	s.Stdout, s.Stderr = io.MultiWriter(tm.out, tm.scr), tm.out
	if err := s.RequestPty("xterm-256color", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if tm.in, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tm.close)
	return tm
}

func (tm *term) close() {
	tm.sess.Close()
	tm.client.Close()
}

func (tm *term) typ(keys string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.in, keys); err != nil {
		tm.t.Fatal(err)
	}
}

// text is what the session has drawn so far, escape sequences removed.
func (tm *term) text() string { return ansi.Strip(tm.out.String()) }

// mark is how much the session has drawn: waitSince looks only after it.
func (tm *term) mark() int { return len(tm.out.String()) }

// waitFor waits until want is on the session's screen.
func (tm *term) waitFor(want string, within time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(tm.scr.String(), want) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q not on screen within %s; the screen:\n%s", want, within, tm.scr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitText waits until the session has written want (to its standard
// error too).
func (tm *term) waitText(want string, within time.Duration) {
	tm.t.Helper()
	tm.waitSince(0, want, within)
}

// waitSince waits until the session draws want after mark.
func (tm *term) waitSince(mark int, want string, within time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(ansi.Strip(tm.out.String()[mark:]), want) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q not on screen within %s; the screen's text:\n%s", want, within, tail(tm.text(), 3000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func waitLog(t testing.TB, ts *testServer, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, l := range strings.Split(ts.log.String(), "\n") {
			if strings.Contains(l, want) {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q; the log:\n%s", want, ts.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = fmt.Sprint
